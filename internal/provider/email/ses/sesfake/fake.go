// Package sesfake is Amazon SES's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package sesfake

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"strings"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/ses/sigv4"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local server speaking SES v2's SendEmail. It verifies each
// request's Signature Version 4 with the secret it knows, as AWS does.
type Fake struct {
	providertest.Base
	providertest.Server
	key sigv4.Key
	seq atomic.Int64
}

const fakePrefix = "/ses-proxy"

// maxSkew is how far a request's X-Amz-Date may be from the server's clock.
const maxSkew = 15 * time.Minute

// New starts one on loopback.
func New() *Fake {
	f := &Fake{key: sigv4.Key{ID: "AKIAHERALDFAKE000001", Secret: "fake/Secret+Access+Key0123456789abcdefghij",
		Region: "us-east-1", Service: "ses"}}
	f.Serve(f.serve)
	return f
}

// URL is the origin to set as credentials.baseUrl (with a path prefix).
func (f *Fake) URL() string { return f.Srv.URL + fakePrefix }

// Credentials point the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"apiKey": f.key.ID, "secretKey": f.key.Secret, "region": f.key.Region,
		"from": "noreply@herald.test", "senderName": "Herald Test", "baseUrl": f.URL()}
}

// BadCredentials carry the right key id with a wrong secret: the
// signature does not match (403 SignatureDoesNotMatch).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["secretKey"] = "wrong/Secret+Access+Key9876543210zyxwvuts"
	return c
}

// Address keeps the message's recipients.
func (f *Fake) Address(*provider.Message) {}

// Traits: a JSON body; SES sends no Retry-After and takes no idempotency key.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{Overrides: true, Origin: true}
}

func awsError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazonaws.sesv2/")
	w.Header().Set("X-Amzn-RequestId", requestID())
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// verify checks the request's signature as AWS does; it returns the
// error type and message to answer, or "" when the request is signed by
// the fake's key.
func (f *Fake) verify(r *http.Request, body []byte) (string, string) {
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), sigv4.Algorithm+" ")
	if !ok {
		return "MissingAuthenticationTokenException", "Missing Authentication Token"
	}
	parts := map[string]string{}
	for _, p := range strings.Split(auth, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		parts[k] = v
	}
	cred := strings.Split(parts["Credential"], "/")
	if len(cred) != 5 || parts["SignedHeaders"] == "" || parts["Signature"] == "" || cred[4] != "aws4_request" {
		return "IncompleteSignatureException", "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters."
	}
	if cred[0] != f.key.ID {
		return "UnrecognizedClientException", "The security token included in the request is invalid."
	}
	stamp := r.Header.Get("X-Amz-Date")
	t, err := time.Parse(sigv4.DateFormat, stamp)
	if err != nil {
		return "IncompleteSignatureException", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
	}
	if d := time.Since(t); d > maxSkew || d < -maxSkew {
		return "InvalidSignatureException", "Signature expired: " + stamp + " is now earlier than the allowed window."
	}
	signed := strings.Split(parts["SignedHeaders"], ";")
	if cred[1] != stamp[:8] || cred[2] != f.key.Region || cred[3] != f.key.Service ||
		!providertest.Contains(signed, "host") || !providertest.Contains(signed, "x-amz-date") {
		return "SignatureDoesNotMatch", "Credential should be scoped to a valid region and service, and host and x-amz-date must be signed."
	}
	values := func(name string) []string {
		if name == "host" {
			return []string{r.Host}
		}
		return r.Header.Values(name)
	}
	creq := sigv4.CanonicalRequest(r.Method, r.URL.Path, r.URL.Query(), signed, values, sigv4.HashHex(body))
	if !hmac.Equal([]byte(f.key.Signature(stamp, creq)), []byte(parts["Signature"])) {
		return "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
	}
	return "", ""
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	raw, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != fakePrefix+"/v2/email/outbound-emails" {
		awsError(w, http.StatusNotFound, "UnknownOperationException", "")
		return
	}
	if typ, msg := f.verify(r, raw); typ != "" {
		awsError(w, http.StatusForbidden, typ, msg)
		return
	}
	switch failure {
	case providertest.Rejected:
		awsError(w, http.StatusBadRequest, "MessageRejected", "Email address is not verified. The following identities failed the check in region US-EAST-1: ada@example.com")
		return
	case providertest.Unavailable:
		awsError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "Service Unavailable")
		return
	case providertest.RateLimited:
		awsError(w, http.StatusTooManyRequests, "TooManyRequestsException", "Too Many Requests")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	var body struct {
		FromEmailAddress string
		Destination      struct{ ToAddresses, CcAddresses, BccAddresses []string }
		ReplyToAddresses []string
		Content          struct {
			Simple *struct {
				Subject *content
				Body    struct {
					HTML *content `json:"Html"`
					Text *content
				}
			}
		}
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		awsError(w, http.StatusBadRequest, "SerializationException", "Could not parse the request body.")
		return
	}
	from, err := mail.ParseAddress(body.FromEmailAddress)
	if err != nil {
		awsError(w, http.StatusBadRequest, "BadRequestException", "Missing or invalid FromEmailAddress.")
		return
	}
	dst := body.Destination
	all := append(append(append(append([]string{}, dst.ToAddresses...), dst.CcAddresses...), dst.BccAddresses...), body.ReplyToAddresses...)
	if len(dst.ToAddresses)+len(dst.CcAddresses)+len(dst.BccAddresses) == 0 || len(all) > 50+len(body.ReplyToAddresses) {
		awsError(w, http.StatusBadRequest, "BadRequestException", "Destination must have between 1 and 50 recipients.")
		return
	}
	for _, a := range all {
		if _, err := mail.ParseAddress(a); err != nil {
			awsError(w, http.StatusBadRequest, "BadRequestException", "Illegal address: "+a)
			return
		}
	}
	s := body.Content.Simple
	if s == nil || s.Subject == nil || (s.Body.HTML == nil && s.Body.Text == nil) {
		awsError(w, http.StatusBadRequest, "BadRequestException", "Content.Simple needs a Subject and a Body with Html or Text.")
		return
	}
	for _, c := range []*content{s.Subject, s.Body.HTML, s.Body.Text} {
		if c != nil && c.Charset != "" && !strings.EqualFold(c.Charset, "UTF-8") {
			awsError(w, http.StatusBadRequest, "BadRequestException", "Unsupported charset "+c.Charset)
			return
		}
	}
	d := providertest.Delivery{To: dst.ToAddresses, Cc: dst.CcAddresses, Bcc: dst.BccAddresses, From: from.Address,
		SenderName: from.Name, Subject: s.Subject.Data, Header: r.Header.Clone(), Body: raw,
		MessageID: fmt.Sprintf("0100%012x-%s-%06d", time.Now().UnixMilli(), requestID(), f.seq.Add(1))}
	if s.Body.HTML != nil {
		d.HTML = s.Body.HTML.Data
	}
	if s.Body.Text != nil {
		d.Text = s.Body.Text.Data
	}
	if len(body.ReplyToAddresses) > 0 {
		d.ReplyTo = body.ReplyToAddresses[0]
	}
	f.Record(d)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", requestID())
	_ = json.NewEncoder(w).Encode(map[string]string{"MessageId": d.MessageID})
}

// content is a text of SendEmail's Content.Simple.
type content struct {
	Data    string `json:"Data"`
	Charset string `json:"Charset"`
}

// requestID is a random UUID, the form of AWS request ids.
func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
