package secret

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// NovuSignature is the novu-signature header of body sent at now, keyed by
// an environment's API key: t=<unix ms>,v1=<hex HMAC-SHA256(key,
// "<t>.<body>")> (Novu's buildNovuSignatureHeader). HTTP request steps and
// bridge calls are signed with it.
func NovuSignature(key string, now time.Time, body []byte) string {
	t := strconv.FormatInt(now.UnixMilli(), 10)
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(t))
	m.Write([]byte{'.'})
	m.Write(body)
	return "t=" + t + ",v1=" + hex.EncodeToString(m.Sum(nil))
}
