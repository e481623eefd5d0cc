package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

const userCols = "u.id, u.organization_id, u.email, u.password_hash, u.created_at, u.updated_at"

func scanUser(row rowScanner, extra ...any) (store.User, error) {
	var u store.User
	var created, updated int64
	err := row.Scan(append([]any{&u.ID, &u.OrganizationID, &u.Email, &u.PasswordHash, &created, &updated}, extra...)...)
	u.CreatedAt, u.UpdatedAt = fromMS(created), fromMS(updated)
	return u, notFound(err)
}

// emailKey is how an address is stored and looked up: sign-in is
// case-insensitive.
func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// UserCreate implements store.Users.
func (db *DB) UserCreate(ctx context.Context, u *store.User) error {
	u.Email = emailKey(u.Email)
	_, err := db.exec(ctx, "INSERT INTO users (id, organization_id, email, password_hash, created_at, updated_at)"+
		" VALUES ($1, $2, $3, $4, $5, $6)", u.ID, u.OrganizationID, u.Email, u.PasswordHash, ms(u.CreatedAt), ms(u.UpdatedAt))
	if db.d.unique(err) {
		return store.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("sqlstore: user create: %w", err)
	}
	return nil
}

// UserGetByEmail implements store.Users.
func (db *DB) UserGetByEmail(ctx context.Context, email string) (store.User, error) {
	return scanUser(db.r.QueryRowContext(ctx, "SELECT "+userCols+" FROM users u WHERE u.email = $1", emailKey(email)))
}

// UserList implements store.Users.
func (db *DB) UserList(ctx context.Context) ([]store.User, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+userCols+" FROM users u ORDER BY u.email")
	return scanAll(rows, err, func(r rowScanner) (store.User, error) { return scanUser(r) })
}

// UserDelete implements store.Users; its sessions go with it (ON DELETE
// CASCADE, and explicitly for clarity on either dialect).
func (db *DB) UserDelete(ctx context.Context, email string) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var userID string
		if err := tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", emailKey(email)).Scan(&userID); err != nil {
			return notFound(err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM user_sessions WHERE user_id = $1", userID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM users WHERE id = $1", userID)
		return err
	})
}

// UserSetPassword implements store.Users.
func (db *DB) UserSetPassword(ctx context.Context, p *store.UserSetPasswordParams) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var userID string
		if err := tx.QueryRowContext(ctx, "UPDATE users SET password_hash = $1, updated_at = $2 WHERE email = $3 RETURNING id",
			p.PasswordHash, ms(p.Now), emailKey(p.Email)).Scan(&userID); err != nil {
			return notFound(err)
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM user_sessions WHERE user_id = $1", userID)
		return err
	})
}

// UserSessionCreate implements store.Users.
func (db *DB) UserSessionCreate(ctx context.Context, s *store.UserSession) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM user_sessions WHERE expires_at <= $1", ms(s.CreatedAt)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO user_sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
			s.TokenHash, s.UserID, ms(s.CreatedAt), ms(s.ExpiresAt))
		return err
	})
}

// UserSessionGet implements store.Users.
func (db *DB) UserSessionGet(ctx context.Context, tokenHash string, now time.Time) (store.UserSession, store.User, error) {
	s := store.UserSession{TokenHash: tokenHash}
	var created, expires int64
	u, err := scanUser(db.r.QueryRowContext(ctx, "SELECT "+userCols+", s.user_id, s.created_at, s.expires_at"+
		" FROM user_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1 AND s.expires_at > $2", tokenHash, ms(now)),
		&s.UserID, &created, &expires)
	if err != nil {
		return store.UserSession{}, store.User{}, err
	}
	s.CreatedAt, s.ExpiresAt = fromMS(created), fromMS(expires)
	return s, u, nil
}

// UserSessionDelete implements store.Users.
func (db *DB) UserSessionDelete(ctx context.Context, tokenHash string) error {
	_, err := db.exec(ctx, "DELETE FROM user_sessions WHERE token_hash = $1", tokenHash)
	return err
}
