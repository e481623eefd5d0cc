package deliveryevents

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of what an event keeps of a post.
const (
	// maxRef bounds an id an event is matched by (a longer one matches
	// nothing: no provider's id is that long).
	maxRef = 256
	// maxKey bounds an identity as stored; a longer one is kept as its hash.
	maxKey = 200
	// maxDetail bounds the execution detail's text.
	maxDetail = 500
)

// clean is s as every store keeps it: valid UTF-8, without NUL.
func clean(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// cut is s cut to at most n bytes, on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ref is an id a message is matched by: "" when it cannot be one.
func ref(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxRef || !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return ""
	}
	return s
}

// key is an event's identity as stored: short identities as they are, the
// others (and those that are not text) by their SHA-256.
func key(s string) string {
	if len(s) <= maxKey && utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return digest([]byte(s))
}

// digest is the identity of content that has none of its own.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// detail is an execution detail's text: "Delivery event from <Provider>:
// <status>", then the provider's reason in parentheses when it gives one.
func detail(provider, status string, reason text) string {
	out := "Delivery event from " + provider + ": " + status
	if r := strings.TrimSpace(clean(string(reason))); r != "" {
		out += " (" + cut(r, maxDetail) + ")"
	}
	return cut(out, maxDetail)
}

// rawJSON is a JSON value of a post, checked by the decoder, as kept: as
// sent, in valid UTF-8 (JSON keeps NUL escaped, which every store holds).
func rawJSON(b []byte) string {
	s := string(bytes.TrimSpace(b))
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// text is a JSON string, or a number's literal, read leniently: any other
// value is "" and never fails the decoding of the event around it.
type text string

// UnmarshalJSON implements json.Unmarshaler.
func (t *text) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) >= 2 && b[0] == '"' && bytes.IndexByte(b, '\\') < 0:
		*t = text(b[1 : len(b)-1]) // no escapes: the string is its bytes (the decoder checked the token)
	case len(b) > 0 && b[0] == '"':
		var s string
		if json.Unmarshal(b, &s) == nil {
			*t = text(s) // as sent: ref, key and detail make it safe to keep
		}
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		*t = text(b)
	}
	return nil
}

// number is a JSON number, or a string holding one, read leniently (NaN
// when it is neither).
type number float64

// UnmarshalJSON implements json.Unmarshaler.
func (n *number) UnmarshalJSON(b []byte) error {
	var t text
	_ = t.UnmarshalJSON(b)
	v, err := strconv.ParseFloat(string(t), 64)
	if err != nil {
		v = math.NaN()
	}
	*n = number(v)
	return nil
}

// latest is the last instant an event's time may be: later ones (and
// nonsense) are taken as the time of receipt.
var latest = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// unixTime is a Unix time in seconds (fractions kept to the millisecond),
// or now when it is none or out of range.
func unixTime(sec number, now time.Time) time.Time {
	v := float64(sec)
	if math.IsNaN(v) || v <= 0 || v > float64(latest.Unix()) {
		return now
	}
	return time.UnixMilli(int64(math.Round(v * 1000))).UTC()
}

// isoTime is an RFC 3339 time, or now when it is none or out of range.
func isoTime(s text, now time.Time) time.Time {
	t, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil || t.Unix() <= 0 || t.After(latest) {
		return now
	}
	return t.UTC()
}

// malformed wraps ErrMalformed with what the provider posts.
func malformed(what string) error { return fmt.Errorf("%w: %s", ErrMalformed, what) }
