package deliveryevents_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/deliveryevents"
)

// The providers' own published test vectors, verified as Herald verifies a post.

// SendGrid's (sendgrid-go helpers/eventwebhook): a P-256 verification key,
// and the signature of the timestamp followed by the payload.
const (
	sendgridVectorKey       = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEDr2LjtURuePQzplybdC+u4CwrqDqBaWjcMMsTbhdbcwHBcepxo7yAQGhHPTnlvFYPAZFceEu/1FwCM/QmGUhA=="
	sendgridVectorSignature = "MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFDWYNH2j/0="
	sendgridVectorTimestamp = "1588788367"
	sendgridVectorPayload   = `{"category":"example_payload","event":"test_event","message_id":"message_id"}`
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestSendGridVector(t *testing.T) {
	t.Parallel()
	post := func(h http.Header, body string) *deliveryevents.Request {
		return &deliveryevents.Request{Header: h, Body: []byte(body), Now: time.Now()}
	}
	signed := header(deliveryevents.SendGridSignatureHeader, sendgridVectorSignature, deliveryevents.SendGridTimestampHeader,
		sendgridVectorTimestamp)
	key := deliveryevents.Secrets{Key: sendgridVectorKey}
	require.NoError(t, deliveryevents.Authenticate("sendgrid", post(signed, sendgridVectorPayload), key))
	for name, req := range map[string]*deliveryevents.Request{
		"another body":      post(signed, sendgridVectorPayload+" "),
		"another timestamp": post(header(deliveryevents.SendGridSignatureHeader, sendgridVectorSignature, deliveryevents.SendGridTimestampHeader, "1588788368"), sendgridVectorPayload),
		"no signature":      post(header(deliveryevents.SendGridTimestampHeader, sendgridVectorTimestamp), sendgridVectorPayload),
		"no headers":        post(http.Header{}, sendgridVectorPayload),
		"signature not base64": post(header(deliveryevents.SendGridSignatureHeader, "!!", deliveryevents.SendGridTimestampHeader,
			sendgridVectorTimestamp), sendgridVectorPayload),
	} {
		require.ErrorIs(t, deliveryevents.Authenticate("sendgrid", req, key), deliveryevents.ErrUnauthorized, name)
	}
	require.ErrorIs(t, deliveryevents.Authenticate("sendgrid", post(signed, sendgridVectorPayload), deliveryevents.Secrets{Key: "bm90IGEga2V5"}),
		deliveryevents.ErrUnauthorized, "a key that is not a P-256 public key refuses every post")
	require.NoError(t, deliveryevents.Authenticate("sendgrid", post(http.Header{}, "[]"), deliveryevents.Secrets{}),
		"without a key a post is accepted unsigned")
}

// Twilio's (its request-validation documentation and libraries): auth token
// 12345, a URL with a query, five parameters.
func TestTwilioVector(t *testing.T) {
	t.Parallel()
	const target = "https://mycompany.com/myapp.php?foo=1&bar=2"
	form := url.Values{"CallSid": {"CA1234567890ABCDE"}, "Caller": {"+14158675309"}, "Digits": {"1234"}, "From": {"+14158675309"},
		"To": {"+18005551212"}}
	require.Equal(t, "RSOYDt4T1cUTdK1PDd93/VVr8B8=", deliveryevents.TwilioSign("12345", target, form))
	req := &deliveryevents.Request{Header: header(deliveryevents.TwilioSignatureHeader, "RSOYDt4T1cUTdK1PDd93/VVr8B8="),
		Body: []byte(form.Encode()), URL: target, Now: time.Now()}
	require.NoError(t, deliveryevents.Authenticate("twilio", req, deliveryevents.Secrets{Token: "12345"}))
	require.ErrorIs(t, deliveryevents.Authenticate("twilio", req, deliveryevents.Secrets{Token: "54321"}), deliveryevents.ErrUnauthorized)
	require.ErrorIs(t, deliveryevents.Authenticate("twilio", req, deliveryevents.Secrets{Key: "12345"}), deliveryevents.ErrUnauthorized,
		"Twilio is authenticated by the auth token alone: without one every post is refused")
	other := *req
	other.URL = "http://mycompany.com/myapp.php?foo=1&bar=2"
	require.ErrorIs(t, deliveryevents.Authenticate("twilio", &other, deliveryevents.Secrets{Token: "12345"}), deliveryevents.ErrUnauthorized,
		"the scheme is signed")
	other = *req
	other.Body = []byte(form.Encode() + "&Digits=9")
	require.ErrorIs(t, deliveryevents.Authenticate("twilio", &other, deliveryevents.Secrets{Token: "12345"}), deliveryevents.ErrUnauthorized)
}

// Svix's (its manual-verification documentation), as Resend signs.
func TestSvixVector(t *testing.T) {
	t.Parallel()
	const secret, msgID, ts, payload = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", `{"test": 2432232314}`
	const want = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	got, err := deliveryevents.SvixSign(secret, msgID, ts, []byte(payload))
	require.NoError(t, err)
	require.Equal(t, want, got)
	at := time.Unix(1614265330, 0)
	post := func(sig string, now time.Time) *deliveryevents.Request {
		return &deliveryevents.Request{Header: header(deliveryevents.SvixIDHeader, msgID, deliveryevents.SvixTimestampHeader, ts,
			deliveryevents.SvixSignatureHeader, sig), Body: []byte(payload), Now: now}
	}
	key := deliveryevents.Secrets{Key: secret}
	require.NoError(t, deliveryevents.Authenticate("resend", post(want, at), key))
	require.NoError(t, deliveryevents.Authenticate("resend", post("v1,bm90IGl0 "+want, at.Add(4*time.Minute)), key),
		"any entry of a rotation's list, within 5 minutes")
	require.NoError(t, deliveryevents.Authenticate("resend", post(want, at.Add(-4*time.Minute)), key))
	for name, req := range map[string]*deliveryevents.Request{
		"stale":           post(want, at.Add(6*time.Minute)),
		"from the future": post(want, at.Add(-6*time.Minute)),
		"v2 entry":        post("v2,"+want[3:], at),
		"none":            post("", at),
	} {
		require.ErrorIs(t, deliveryevents.Authenticate("resend", req, key), deliveryevents.ErrUnauthorized, name)
	}
}

// Mailgun publishes no vector: signed here as its documentation says, hex
// HMAC-SHA256 of timestamp followed by token.
func TestMailgunSignature(t *testing.T) {
	t.Parallel()
	const key = "key-mailgun-signing"
	body := func(ts, token, sig string) []byte {
		b, _ := json.Marshal(map[string]any{"signature": map[string]string{"timestamp": ts, "token": token, "signature": sig},
			"event-data": map[string]any{"event": "delivered", "id": "ev1"}})
		return b
	}
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte("1529006854" + "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"))
	sig := hex.EncodeToString(mac.Sum(nil))
	ok := &deliveryevents.Request{Body: body("1529006854", "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0", sig)}
	require.NoError(t, deliveryevents.Authenticate("mailgun", ok, deliveryevents.Secrets{Key: key}))
	for name, b := range map[string][]byte{
		"another token": body("1529006854", "b8ce0edb", sig),
		"uppercase hex": body("1529006854", "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0", upper(sig)),
		"no signature":  []byte(`{"event-data":{"event":"delivered"}}`),
		"not JSON":      []byte("signature=x"),
	} {
		require.ErrorIs(t, deliveryevents.Authenticate("mailgun", &deliveryevents.Request{Body: b}, deliveryevents.Secrets{Key: key}),
			deliveryevents.ErrUnauthorized, name)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func TestPostmarkBasicAuth(t *testing.T) {
	t.Parallel()
	key := deliveryevents.Secrets{Key: "herald:s3cret"}
	post := func(auth string) *deliveryevents.Request {
		return &deliveryevents.Request{Header: header("Authorization", auth), Body: []byte(`{"RecordType":"Delivery"}`)}
	}
	require.NoError(t, deliveryevents.Authenticate("postmark", post("Basic "+base64.StdEncoding.EncodeToString([]byte("herald:s3cret"))), key))
	require.NoError(t, deliveryevents.Authenticate("postmark", post("basic "+base64.StdEncoding.EncodeToString([]byte("herald:s3cret"))), key))
	for _, auth := range []string{"", "Basic", "Basic " + base64.StdEncoding.EncodeToString([]byte("herald:s3cre")),
		"Bearer " + base64.StdEncoding.EncodeToString([]byte("herald:s3cret")), "Basic herald:s3cret"} {
		require.ErrorIs(t, deliveryevents.Authenticate("postmark", post(auth), key), deliveryevents.ErrUnauthorized, auth)
	}
}

// A freshly generated SendGrid key pair signs and verifies like the vector.
func TestSendGridFreshKey(t *testing.T) {
	t.Parallel()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	require.NoError(t, err)
	body := []byte(`[{"event":"delivered","sg_event_id":"e1"}]`)
	sum := sha256.Sum256(append([]byte("1700000000"), body...))
	sig, err := ecdsa.SignASN1(rand.Reader, priv, sum[:])
	require.NoError(t, err)
	req := &deliveryevents.Request{Header: header(deliveryevents.SendGridSignatureHeader, base64.StdEncoding.EncodeToString(sig),
		deliveryevents.SendGridTimestampHeader, "1700000000"), Body: body}
	require.NoError(t, deliveryevents.Authenticate("sendgrid", req, deliveryevents.Secrets{Key: base64.StdEncoding.EncodeToString(der)}))
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err = x509.MarshalPKIXPublicKey(&other.PublicKey)
	require.NoError(t, err)
	require.ErrorIs(t, deliveryevents.Authenticate("sendgrid", req, deliveryevents.Secrets{Key: base64.StdEncoding.EncodeToString(der)}),
		deliveryevents.ErrUnauthorized, "another key")
}

func TestUnsupportedProvider(t *testing.T) {
	t.Parallel()
	req := &deliveryevents.Request{Body: []byte("[]")}
	require.ErrorIs(t, deliveryevents.Authenticate("nodemailer", req, deliveryevents.Secrets{}), deliveryevents.ErrUnsupported)
	_, err := deliveryevents.Parse("nexmo", req)
	require.ErrorIs(t, err, deliveryevents.ErrUnsupported)
	for _, p := range []string{"sendgrid", "mailgun", "resend", "postmark", "twilio", "ses"} {
		require.True(t, deliveryevents.Supported(p), p)
	}
	require.False(t, deliveryevents.Supported("nodemailer"))
}
