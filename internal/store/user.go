package store

import (
	"context"
	"time"
)

// User is an account of the dashboard (herald user create): an e-mail
// address, unique across the install and kept lower-cased, and the hash of
// its password (secret.HashPassword); never the password itself.
type User struct {
	ID             string
	OrganizationID string
	Email          string
	PasswordHash   string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// UserSession is a signed-in dashboard session. The store keeps the hash of
// its token only: the cookie holds the token.
type UserSession struct {
	TokenHash string
	UserID    string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// UserSetPasswordParams changes an account's password hash.
type UserSetPasswordParams struct {
	Email        string
	PasswordHash string
	Now          time.Time
}

// Users holds the dashboard's accounts and sessions.
type Users interface {
	// UserCreate adds an account; an e-mail address in use is ErrConflict.
	UserCreate(ctx context.Context, u *User) error
	// UserGetByEmail finds an account by its address, in any case.
	UserGetByEmail(ctx context.Context, email string) (User, error)
	// UserList returns every account, by e-mail address.
	UserList(ctx context.Context) ([]User, error)
	// UserDelete removes an account and ends its sessions.
	UserDelete(ctx context.Context, email string) error
	// UserSetPassword replaces an account's password hash and ends its
	// sessions.
	UserSetPassword(ctx context.Context, p *UserSetPasswordParams) error
	// UserSessionCreate stores a session, and deletes the sessions that
	// expired by its creation.
	UserSessionCreate(ctx context.Context, s *UserSession) error
	// UserSessionGet returns the session of a token hash with its account,
	// ErrNotFound once it has expired at now or ended.
	UserSessionGet(ctx context.Context, tokenHash string, now time.Time) (UserSession, User, error)
	// UserSessionDelete ends a session (signing out); an unknown one is no
	// error.
	UserSessionDelete(ctx context.Context, tokenHash string) error
}
