package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// userWrites are the write-gate cases of the dashboard's accounts and
// sessions (TestEveryWriteTakesTheGate).
func (f *gateFixture) userWrites() map[string]gatedWrite {
	var user store.User
	var session store.UserSession
	newUser := func(t *testing.T) {
		user = store.User{ID: id.New(), OrganizationID: f.env.OrganizationID, Email: id.New() + "@example.com",
			PasswordHash: "hash", CreatedAt: f.now(), UpdatedAt: f.at}
		require.NoError(t, f.db.UserCreate(t.Context(), &user))
	}
	newSession := func(t *testing.T) {
		newUser(t)
		session = store.UserSession{TokenHash: id.New(), UserID: user.ID, CreatedAt: f.now(), ExpiresAt: f.at.Add(time.Hour)}
		require.NoError(t, f.db.UserSessionCreate(t.Context(), &session))
	}
	return map[string]gatedWrite{
		"UserCreate": {setup: func(*testing.T) {
			user = store.User{ID: id.New(), OrganizationID: f.env.OrganizationID, Email: id.New() + "@example.com",
				PasswordHash: "hash", CreatedAt: f.now(), UpdatedAt: f.at}
		}, call: func(ctx context.Context) error { return f.db.UserCreate(ctx, &user) }},
		"UserDelete": {setup: newUser, call: func(ctx context.Context) error { return f.db.UserDelete(ctx, user.Email) }},
		"UserSetPassword": {setup: newUser, call: func(ctx context.Context) error {
			return f.db.UserSetPassword(ctx, &store.UserSetPasswordParams{Email: user.Email, PasswordHash: "other", Now: f.at})
		}},
		"UserSessionCreate": {setup: func(t *testing.T) {
			newUser(t)
			session = store.UserSession{TokenHash: id.New(), UserID: user.ID, CreatedAt: f.now(), ExpiresAt: f.at.Add(time.Hour)}
		}, call: func(ctx context.Context) error { return f.db.UserSessionCreate(ctx, &session) }},
		"UserSessionDelete": {setup: newSession, call: func(ctx context.Context) error {
			return f.db.UserSessionDelete(ctx, session.TokenHash)
		}},
	}
}
