package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Dashboard account passwords are hashed with Argon2id (RFC 9106) and kept
// as PHC strings, "$argon2id$v=19$m=…,t=…,p=…$salt$hash", so that the cost
// can be raised later without invalidating the hashes already stored.
// The cost is OWASP's first recommendation: 19 MiB, two passes, one lane.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// MinPasswordLength and MaxPasswordLength bound a dashboard password (in
// bytes): long enough to resist guessing, short enough that hashing one
// costs a bounded amount.
const (
	MinPasswordLength = 8
	MaxPasswordLength = 1024
)

// ErrPasswordMismatch is CheckPassword's answer to a wrong password.
var ErrPasswordMismatch = errors.New("secret: the password does not match")

var b64 = base64.RawStdEncoding

// HashPassword returns the Argon2id hash of a password as a PHC string.
func HashPassword(password string) (string, error) {
	if len(password) < MinPasswordLength || len(password) > MaxPasswordLength {
		return "", fmt.Errorf("secret: a password has %d to %d bytes", MinPasswordLength, MaxPasswordLength)
	}
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword compares a password with a hash of HashPassword, in
// constant time; ErrPasswordMismatch when it differs, another error when
// the hash is not one HashPassword writes.
func CheckPassword(hash, password string) error {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return errors.New("secret: not an argon2id password hash")
	}
	var memory, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &passes, &threads); err != nil ||
		memory == 0 || memory > 1<<22 || passes == 0 || passes > 16 || threads == 0 {
		return errors.New("secret: bad argon2id parameters")
	}
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return errors.New("secret: bad argon2id salt or hash")
	}
	if len(password) > MaxPasswordLength {
		return ErrPasswordMismatch
	}
	got := argon2.IDKey([]byte(password), salt, passes, memory, threads, uint32(len(want)))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrPasswordMismatch
	}
	return nil
}

// NewSessionToken returns a random dashboard session token (the cookie's
// value) and the hash the store keeps of it.
func NewSessionToken() (token, hash string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashSessionToken(token)
}

// HashSessionToken is the store's key of a dashboard session token.
func HashSessionToken(token string) string {
	sum := sha256.Sum256([]byte("herald-dashboard-session\x00" + token))
	return hex.EncodeToString(sum[:])
}
