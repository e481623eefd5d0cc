package deliveryevents

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS's SignatureVersion 1 is SHA1withRSA
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/netguard"
)

// Amazon SNS posts a topic's messages to an HTTP(S) subscription as one
// JSON object, signed with RSA (SignatureVersion 1: SHA1withRSA, 2:
// SHA256withRSA) over a canonical string of some of its fields, with the
// key of the X.509 certificate at its SigningCertURL on SNS's own host.
// Amazon SES publishes its events through SNS (ses.go); SNS fetches the
// certificates and confirms subscriptions.

// SNSMessageTypeHeader names an SNS post's Type.
const SNSMessageTypeHeader = "x-amz-sns-message-type"

// SNS's message types.
const (
	SNSNotification             = "Notification"
	SNSSubscriptionConfirmation = "SubscriptionConfirmation"
	SNSUnsubscribeConfirmation  = "UnsubscribeConfirmation"
)

// snsMaxAge is how far an SNS message's Timestamp may be from Herald's
// clock, either way.
const snsMaxAge = time.Hour

// ErrUnavailable: what authenticating or answering a post needs from the
// provider (SNS's signing certificate, a subscription's confirmation)
// could not be had; the provider may post again.
var ErrUnavailable = errors.New("the provider could not be reached")

// SNSMessage is the body of an SNS post. Subject is nil when the message
// has none (it is then not signed).
type SNSMessage struct {
	Type             string  `json:"Type"`
	MessageID        string  `json:"MessageId"`
	Token            string  `json:"Token,omitempty"`
	TopicArn         string  `json:"TopicArn"`
	Subject          *string `json:"Subject,omitempty"`
	Message          string  `json:"Message"`
	SubscribeURL     string  `json:"SubscribeURL,omitempty"`
	UnsubscribeURL   string  `json:"UnsubscribeURL,omitempty"`
	Timestamp        string  `json:"Timestamp"`
	SignatureVersion string  `json:"SignatureVersion"`
	Signature        string  `json:"Signature"`
	SigningCertURL   string  `json:"SigningCertURL"`
}

// snsMessageOf reads a post's body.
func snsMessageOf(body []byte) (*SNSMessage, error) {
	var m SNSMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// StringToSign is the canonical string SNS signs: each signed field's name
// and value, each followed by a newline, in the byte order of the names —
// Message, MessageId, Subject (when there is one), Timestamp, TopicArn and
// Type for a Notification; Message, MessageId, SubscribeURL, Timestamp,
// Token, TopicArn and Type for the confirmations.
func (m *SNSMessage) StringToSign() (string, error) {
	var pairs [][2]string
	switch m.Type {
	case SNSNotification:
		pairs = append(pairs, [2]string{"Message", m.Message}, [2]string{"MessageId", m.MessageID})
		if m.Subject != nil {
			pairs = append(pairs, [2]string{"Subject", *m.Subject})
		}
		pairs = append(pairs, [2]string{"Timestamp", m.Timestamp}, [2]string{"TopicArn", m.TopicArn}, [2]string{"Type", m.Type})
	case SNSSubscriptionConfirmation, SNSUnsubscribeConfirmation:
		pairs = [][2]string{{"Message", m.Message}, {"MessageId", m.MessageID}, {"SubscribeURL", m.SubscribeURL},
			{"Timestamp", m.Timestamp}, {"Token", m.Token}, {"TopicArn", m.TopicArn}, {"Type", m.Type}}
	default:
		return "", fmt.Errorf("SNS signs no message of type %q", m.Type)
	}
	var b strings.Builder
	for _, p := range pairs {
		b.WriteString(p[0] + "\n" + p[1] + "\n")
	}
	return b.String(), nil
}

// snsHash is the hash of a SignatureVersion.
func snsHash(version string) (crypto.Hash, bool) {
	switch version {
	case "1":
		return crypto.SHA1, true
	case "2":
		return crypto.SHA256, true
	}
	return 0, false
}

// snsDigest is the digest of the canonical string with hash.
func snsDigest(hash crypto.Hash, canonical string) []byte {
	if hash == crypto.SHA1 {
		sum := sha1.Sum([]byte(canonical)) //nolint:gosec // SignatureVersion 1
		return sum[:]
	}
	sum := sha256.Sum256([]byte(canonical))
	return sum[:]
}

// SNSSign signs m as SNS does, with key and m.SignatureVersion, setting
// m.Signature: tests and tools sign with it.
func SNSSign(m *SNSMessage, key *rsa.PrivateKey) error {
	canonical, err := m.StringToSign()
	if err != nil {
		return err
	}
	hash, ok := snsHash(m.SignatureVersion)
	if !ok {
		return fmt.Errorf("SignatureVersion %q is neither 1 nor 2", m.SignatureVersion)
	}
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, hash, snsDigest(hash, canonical))
	if err != nil {
		return err
	}
	m.Signature = base64.StdEncoding.EncodeToString(sig)
	return nil
}

// snsHost is SNS's host in a region: sns.<region>.amazonaws.com, or
// .amazonaws.com.cn in China.
var snsHost = regexp.MustCompile(`^sns\.[a-z0-9-]{3,}\.amazonaws\.com(\.cn)?$`)

// maxSNSURL bounds a URL SNS names.
const maxSNSURL = 2048

// SNSURL checks that raw is a URL of SNS itself — https, on the host
// sns.<region>.amazonaws.com (or .amazonaws.com.cn), on the default port,
// without credentials — and, for a signing certificate, that its path ends
// in .pem and it has no query. Herald requests no other URL a post names.
func SNSURL(raw string, cert bool) error {
	if len(raw) > maxSNSURL {
		return errors.New("the URL is too long")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "https" || u.User != nil || u.Opaque != "" || (u.Port() != "" && u.Port() != "443") || !snsHost.MatchString(u.Hostname()) {
		return fmt.Errorf("%q is not an https URL of sns.<region>.amazonaws.com", raw)
	}
	if cert && (!strings.HasSuffix(u.Path, ".pem") || u.RawQuery != "" || u.Fragment != "") {
		return fmt.Errorf("%q is not the URL of a .pem certificate", raw)
	}
	return nil
}

// Bounds of SNS's requests.
const (
	// DefaultSNSTimeout bounds one request to SNS (the answer read).
	DefaultSNSTimeout = 5 * time.Second
	// maxCertificate bounds a certificate's PEM (SNS's are about 2 KiB).
	maxCertificate = 64 << 10
	// maxCertificates bounds the certificates kept: SNS signs with few.
	maxCertificates = 64
	// maxConfirmAnswer is what is read of a confirmation's answer.
	maxConfirmAnswer = 64 << 10
)

// SNSOptions configure an SNS; the zero value of each field takes its
// default.
type SNSOptions struct {
	// Dialer connects the requests (default: the private-network guard,
	// private networks refused).
	Dialer *netguard.Dialer
	// Transport, when set, makes the requests instead of one dialing
	// through Dialer (tests serve certificates from memory).
	Transport http.RoundTripper
	// Timeout bounds one request (default DefaultSNSTimeout).
	Timeout time.Duration
}

// SNS fetches the certificates SNS signs with, each once per URL, and
// confirms subscriptions; it is safe for concurrent use. Its requests go
// only to SNS's host (SNSURL), through the private-network guard, and
// never follow a redirect.
type SNS struct {
	client *http.Client

	mu    sync.Mutex
	certs map[string]*rsa.PublicKey
}

// NewSNS builds an SNS.
func NewSNS(o SNSOptions) *SNS {
	if o.Timeout <= 0 {
		o.Timeout = DefaultSNSTimeout
	}
	if o.Transport == nil {
		if o.Dialer == nil {
			o.Dialer = &netguard.Dialer{}
		}
		tr := o.Dialer.Transport()
		tr.ResponseHeaderTimeout = o.Timeout
		o.Transport = tr
	}
	return &SNS{certs: map[string]*rsa.PublicKey{}, client: &http.Client{Transport: o.Transport, Timeout: o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get requests an SNS URL: its answer's body, up to limit bytes, when it is
// a 2xx. A request that fails, or a 5xx, is ErrUnavailable; another answer
// is its status.
func (s *SNS) get(ctx context.Context, target string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "Herald")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		return nil, fmt.Errorf("%w: SNS answered %d", ErrUnavailable, resp.StatusCode)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("SNS answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("the answer is over %d bytes", limit)
	}
	return body, nil
}

// publicKey is the RSA key of the certificate at certURL, which SNSURL
// has accepted: fetched once, then kept. A certificate that cannot be had
// now is ErrUnavailable; one that is not an RSA certificate is
// ErrUnauthorized.
func (s *SNS) publicKey(ctx context.Context, certURL string) (*rsa.PublicKey, error) {
	s.mu.Lock()
	pub, ok := s.certs[certURL]
	s.mu.Unlock()
	if ok {
		return pub, nil
	}
	body, err := s.get(ctx, certURL, maxCertificate)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return nil, fmt.Errorf("SNS's signing certificate: %w", err)
		}
		return nil, fmt.Errorf("%w: SNS's signing certificate: %w", ErrUnauthorized, err)
	}
	block, _ := pem.Decode(body)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%w: SNS's signing certificate is not a PEM certificate", ErrUnauthorized)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: SNS's signing certificate: %w", ErrUnauthorized, err)
	}
	pub, ok = cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: SNS's signing certificate has no RSA key", ErrUnauthorized)
	}
	s.mu.Lock()
	if len(s.certs) >= maxCertificates {
		clear(s.certs) // SNS rotates its certificates rarely: only forged URLs fill the cache
	}
	s.certs[certURL] = pub
	s.mu.Unlock()
	return pub, nil
}

// verify checks an SNS message's signature, and that its Timestamp is
// within snsMaxAge of now. The certificate's URL is checked before any
// request: a message naming another is refused without one.
func (s *SNS) verify(ctx context.Context, m *SNSMessage, now time.Time) error {
	canonical, err := m.StringToSign()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	hash, ok := snsHash(m.SignatureVersion)
	if !ok {
		return fmt.Errorf("%w: SignatureVersion %q is neither 1 nor 2", ErrUnauthorized, m.SignatureVersion)
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil || len(sig) == 0 {
		return fmt.Errorf("%w: no signature", ErrUnauthorized)
	}
	at, err := time.Parse(time.RFC3339Nano, m.Timestamp)
	if err != nil {
		return fmt.Errorf("%w: Timestamp %q is not a time", ErrUnauthorized, m.Timestamp)
	}
	if d := now.Sub(at); d > snsMaxAge || d < -snsMaxAge {
		return fmt.Errorf("%w: Timestamp %s is more than an hour from now", ErrUnauthorized, m.Timestamp)
	}
	if err := SNSURL(m.SigningCertURL, true); err != nil {
		return fmt.Errorf("%w: SigningCertURL: %w", ErrUnauthorized, err)
	}
	if s == nil {
		return fmt.Errorf("%w: no way to fetch SNS's certificates", ErrUnauthorized)
	}
	pub, err := s.publicKey(ctx, m.SigningCertURL)
	if err != nil {
		return err
	}
	if rsa.VerifyPKCS1v15(pub, hash, snsDigest(hash, canonical), sig) != nil {
		return ErrUnauthorized
	}
	return nil
}

// Confirm confirms a subscription: a GET of the SubscribeURL of its
// SubscriptionConfirmation, which must be SNS's (SNSURL). Failing, it is
// ErrUnavailable: SNS posts the confirmation again.
func (s *SNS) Confirm(ctx context.Context, subscribeURL string) error {
	if err := SNSURL(subscribeURL, false); err != nil {
		return fmt.Errorf("%w: SubscribeURL: %w", ErrUnavailable, err)
	}
	if _, err := s.get(ctx, subscribeURL, maxConfirmAnswer); err != nil {
		if errors.Is(err, ErrUnavailable) {
			return fmt.Errorf("confirming the subscription: %w", err)
		}
		return fmt.Errorf("%w: confirming the subscription: %w", ErrUnavailable, err)
	}
	return nil
}
