// Package id generates and checks Herald's object identifiers: 24 lowercase hex
// characters, time-ordered (4 bytes of Unix seconds, 5 random bytes fixed per
// process, 3 bytes of counter), the shape clients of this field already expect.
package id

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
	"time"
)

var (
	processUnique [5]byte
	counter       atomic.Uint32
)

func init() {
	if _, err := rand.Read(processUnique[:]); err != nil {
		panic("id: no randomness: " + err.Error())
	}
	var seed [4]byte
	_, _ = rand.Read(seed[:])
	counter.Store(binary.BigEndian.Uint32(seed[:]))
}

// New returns a fresh object identifier for the current time.
func New() string { return NewAt(time.Now()) }

// NewAt returns a fresh object identifier whose time part is t.
func NewAt(t time.Time) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(t.Unix()))
	copy(b[4:9], processUnique[:])
	c := counter.Add(1)
	b[9], b[10], b[11] = byte(c>>16), byte(c>>8), byte(c)
	return hex.EncodeToString(b[:])
}

// Valid reports whether s has the shape of an object identifier.
func Valid(s string) bool {
	if len(s) != 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
