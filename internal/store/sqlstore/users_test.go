package sqlstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestUsers: dashboard accounts are unique by e-mail address in any case,
// listed by address, found by it, re-hashed and deleted; deleting one or
// changing its password ends its sessions.
func TestUsers(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		list, err := db.UserList(ctx)
		require.NoError(t, err)
		require.Empty(t, list)

		ada := store.User{ID: id.New(), OrganizationID: tn.Org.ID, Email: " Ada@Example.com", PasswordHash: "h1", CreatedAt: base, UpdatedAt: base}
		require.NoError(t, db.UserCreate(ctx, &ada))
		require.Equal(t, "ada@example.com", ada.Email)
		dup := store.User{ID: id.New(), OrganizationID: tn.Org.ID, Email: "ADA@example.com", PasswordHash: "h", CreatedAt: base, UpdatedAt: base}
		require.ErrorIs(t, db.UserCreate(ctx, &dup), store.ErrConflict)
		bob := store.User{ID: id.New(), OrganizationID: tn.Org.ID, Email: "bob@example.com", PasswordHash: "h2", CreatedAt: base, UpdatedAt: base}
		require.NoError(t, db.UserCreate(ctx, &bob))

		got, err := db.UserGetByEmail(ctx, "ADA@EXAMPLE.COM")
		require.NoError(t, err)
		require.Equal(t, ada, got)
		_, err = db.UserGetByEmail(ctx, "nobody@example.com")
		require.ErrorIs(t, err, store.ErrNotFound)
		list, err = db.UserList(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.User{ada, bob}, list)

		s1 := store.UserSession{TokenHash: "t1", UserID: ada.ID, CreatedAt: base, ExpiresAt: base.Add(time.Hour)}
		require.NoError(t, db.UserSessionCreate(ctx, &s1))
		sess, u, err := db.UserSessionGet(ctx, "t1", base.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, s1, sess)
		require.Equal(t, ada, u)

		later := base.Add(time.Minute)
		require.NoError(t, db.UserSetPassword(ctx, &store.UserSetPasswordParams{Email: "Ada@example.com", PasswordHash: "h3", Now: later}))
		_, _, err = db.UserSessionGet(ctx, "t1", later)
		require.ErrorIs(t, err, store.ErrNotFound, "a new password ends the sessions")
		got, err = db.UserGetByEmail(ctx, "ada@example.com")
		require.NoError(t, err)
		require.Equal(t, "h3", got.PasswordHash)
		require.Equal(t, later, got.UpdatedAt)
		require.ErrorIs(t, db.UserSetPassword(ctx, &store.UserSetPasswordParams{Email: "x@example.com", PasswordHash: "h", Now: later}),
			store.ErrNotFound)

		s2 := store.UserSession{TokenHash: "t2", UserID: bob.ID, CreatedAt: base, ExpiresAt: base.Add(time.Hour)}
		require.NoError(t, db.UserSessionCreate(ctx, &s2))
		require.NoError(t, db.UserDelete(ctx, "BOB@example.com"))
		_, _, err = db.UserSessionGet(ctx, "t2", base)
		require.ErrorIs(t, err, store.ErrNotFound, "deleting an account ends its sessions")
		require.ErrorIs(t, db.UserDelete(ctx, "bob@example.com"), store.ErrNotFound)
		require.Zero(t, count(t, db, "SELECT count(*) FROM user_sessions"))
	})
}

// TestUserSessions: a session lasts until it expires or is deleted;
// creating one clears the expired ones.
func TestUserSessions(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		ada := store.User{ID: id.New(), OrganizationID: tn.Org.ID, Email: "ada@example.com", PasswordHash: "h", CreatedAt: base, UpdatedAt: base}
		require.NoError(t, db.UserCreate(ctx, &ada))
		old := store.UserSession{TokenHash: "old", UserID: ada.ID, CreatedAt: base, ExpiresAt: base.Add(time.Hour)}
		require.NoError(t, db.UserSessionCreate(ctx, &old))
		_, _, err := db.UserSessionGet(ctx, "old", base.Add(time.Hour))
		require.ErrorIs(t, err, store.ErrNotFound, "expired at its expiry")
		_, _, err = db.UserSessionGet(ctx, "old", base.Add(time.Hour-time.Millisecond))
		require.NoError(t, err)

		fresh := store.UserSession{TokenHash: "new", UserID: ada.ID, CreatedAt: base.Add(2 * time.Hour), ExpiresAt: base.Add(3 * time.Hour)}
		require.NoError(t, db.UserSessionCreate(ctx, &fresh))
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM user_sessions"), "the expired session was cleared")

		require.NoError(t, db.UserSessionDelete(ctx, "new"))
		_, _, err = db.UserSessionGet(ctx, "new", base.Add(2*time.Hour))
		require.ErrorIs(t, err, store.ErrNotFound)
		require.NoError(t, db.UserSessionDelete(ctx, "new"), "deleting twice is no error")
		_, _, err = db.UserSessionGet(ctx, "", base)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
