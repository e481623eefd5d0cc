package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/store"
)

// maxIdempotencyKey is the longest idempotency key accepted
// (docs/api-behaviour.md, "Authentication and idempotency keys").
const maxIdempotencyKey = 255

// idempotencyKey reads the Idempotency-Key header of an authenticated
// request and echoes it. A key must be 1–255 printable ASCII characters: any
// other is a 400 on the methods that use keys and is ignored on GET and HEAD,
// which ignore keys. An invalid key is never echoed.
func idempotencyKey(w http.ResponseWriter, r *http.Request) (string, error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return "", nil
	}
	if msg := invalidIdempotencyKey(key); msg != "" {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return "", nil
		}
		return "", errorf(http.StatusBadRequest, msg)
	}
	w.Header().Set("Idempotency-Key", key)
	return key, nil
}

// invalidIdempotencyKey says what is wrong with key, or "" when nothing is.
func invalidIdempotencyKey(key string) string {
	if len(key) > maxIdempotencyKey {
		return fmt.Sprintf("The idempotency-key header must be at most %d characters", maxIdempotencyKey)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "The idempotency-key header must hold printable ASCII characters only"
		}
	}
	return ""
}

// requestHash identifies a request for its idempotency key: method, path,
// query, whether a session made it, and the body in canonical form, so that
// the same JSON sent with other whitespace or key order is the same request.
func requestHash(r *http.Request, c caller) string {
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	sum := sha256.New()
	fmt.Fprintf(sum, "%s %s?%s\n", r.Method, r.URL.Path, r.URL.RawQuery)
	if c.Session {
		// Session answers carry decrypted credentials: never replay one to an
		// API-key caller (rule 5.3), and keep it sealed at rest.
		sum.Write([]byte("session\n"))
	}
	sum.Write(canonicalJSON(body))
	return hex.EncodeToString(sum.Sum(nil))
}

// canonicalJSON returns body in one canonical form when it is a single JSON
// value: object keys sorted, insignificant whitespace dropped, numbers as
// written, strings escaped alike, a repeated key kept last (as the handlers
// read it). Anything else — empty, not UTF-8, not JSON — comes back as is.
func canonicalJSON(body []byte) []byte {
	if len(bytes.TrimSpace(body)) == 0 || !utf8.Valid(body) {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

// sealedAnswer begins the stored answer of an API-key caller that carries
// a secret (secretAnswer), sealed; a JSON answer never begins so.
const sealedAnswer = "sealed:"

// idempotent runs h at most once per (environment, key): a repeat replays the
// stored response, a different request under the same key is a 422, and a
// repeat while the first still runs is a 409. A key whose request failed
// with a 5xx or panicked is released for a retry.
func (s *Server) idempotent(w *recorder, r *http.Request, c caller, key string, h handlerFunc) error {
	hash := requestHash(r, c)
	rec, started, err := s.store.IdempotencyBegin(r.Context(), &store.IdempotencyBeginParams{Scope: c.Scope, Key: key, RequestHash: hash,
		Now: s.now()})
	if err != nil {
		return err
	}
	if !started {
		return s.replay(w, c, key, hash, rec)
	}
	ctx := context.WithoutCancel(r.Context())
	settled := false
	defer func() {
		// A server failure is not an outcome worth replaying, and a panic
		// (re-raised to wrap, which answers 500) must not hold the key
		// until it goes stale: free it.
		if !settled {
			if err := s.store.IdempotencyAbandon(ctx, c.Scope, key); err != nil {
				s.log.Error("abandoning an idempotency key", "err", err)
			}
		}
	}()
	w.capture = true
	if herr := h(w, r); herr != nil {
		s.writeError(w, r, herr)
	}
	if w.status >= 500 {
		return nil
	}
	settled = true
	stored := w.body.Bytes()
	if c.Session {
		stored = []byte(s.keys.Seal(stored))
	} else if w.secret {
		stored = []byte(sealedAnswer + s.keys.Seal(stored))
	}
	if err := s.store.IdempotencyFinish(ctx, &store.IdempotencyFinishParams{Scope: c.Scope, Key: key,
		Status: w.status, Body: stored}); err != nil {
		s.log.Error("storing an idempotent response", "err", err)
	}
	return nil
}

// replay answers a request whose key was claimed before.
func (s *Server) replay(w *recorder, c caller, key, hash string, rec store.IdempotencyRecord) error {
	switch {
	case rec.RequestHash != hash:
		return invalid("idempotency-key", "was already used for a different request", key)
	case !rec.Done:
		e := errorf(http.StatusConflict, "A request with this idempotency-key is still being processed")
		e.retryAfter = "1"
		return e
	}
	body := rec.Body
	if sealed, ok := strings.CutPrefix(string(rec.Body), sealedAnswer); c.Session || ok {
		if !ok {
			sealed = string(rec.Body)
		}
		var err error
		if body, err = s.keys.Open(sealed); err != nil {
			return fmt.Errorf("opening an idempotent response: %w", err)
		}
	}
	w.Header().Set("Idempotency-Replay", "true")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(rec.Status)
	_, _ = w.Write(body)
	return nil
}
