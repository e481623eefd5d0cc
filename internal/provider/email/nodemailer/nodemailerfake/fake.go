// Package nodemailerfake is the SMTP provider's (nodemailer) wire fake: a local
// server that speaks its protocol, for the shared provider suite, end-to-end
// tests and the delivery benchmark. The herald binary never imports it
// (cmd/herald's TestBinaryHasNoTestCode checks).
package nodemailerfake

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/mail"
	"strconv"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local SMTP server (emersion/go-smtp) that accepts mail as a
// relay does: STARTTLS with a self-signed certificate, AUTH required
// before MAIL, every header recipient among the RCPTs, and a well-formed
// MIME message.
type Fake struct {
	providertest.Base
	opts  Options
	srv   *smtp.Server
	ln    *countingListener
	roots *x509.CertPool
	done  chan struct{}
}

// Options shape a fake server.
type Options struct {
	// NoTLS offers no STARTTLS (and AUTH over plain text).
	NoTLS bool
	// ImplicitTLS speaks TLS from the first byte, as on port 465 (secure: true).
	ImplicitTLS bool
	// LoginOnly offers AUTH LOGIN instead of AUTH PLAIN.
	LoginOnly bool
	// IdleTimeout drops a client silent that long, with "421 4.4.2" as
	// relays do (0: never).
	IdleTimeout time.Duration
}

const (
	fakeUser     = "herald-smtp"
	fakePassword = "smtp-fake-password-42"
	hangLimit    = time.Minute
)

// New starts one on loopback with STARTTLS and AUTH PLAIN.
func New() *Fake { return NewWith(Options{}) }

// NewWith starts one with options.
func NewWith(o Options) *Fake {
	cert, roots := selfSigned()
	f := &Fake{opts: o, roots: roots, done: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	f.ln = &countingListener{Listener: ln}
	f.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{f: f, conn: connOf(c.Conn())}, nil
	}))
	f.srv.Domain = "fake-smtp.herald.test"
	f.srv.MaxMessageBytes = 10 << 20
	f.srv.MaxRecipients = 50
	f.srv.ErrorLog = log.New(io.Discard, "", 0)
	f.srv.ReadTimeout = o.IdleTimeout
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	var l net.Listener = f.ln
	switch {
	case o.ImplicitTLS:
		l = tls.NewListener(f.ln, tlsConf)
	case o.NoTLS:
		f.srv.AllowInsecureAuth = true
	default:
		f.srv.TLSConfig = tlsConf
	}
	go func() { _ = f.srv.Serve(l) }()
	return f
}

// Addr is the server's host:port.
func (f *Fake) Addr() string { return f.ln.Addr().String() }

// Connections counts the TCP connections the server accepted.
func (f *Fake) Connections() int { return int(f.ln.accepted.Load()) }

// Credentials point the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	_, port, _ := net.SplitHostPort(f.Addr())
	return provider.Credentials{"host": "127.0.0.1", "port": port, "secure": f.opts.ImplicitTLS,
		"user": fakeUser, "password": fakePassword, "from": "noreply@herald.test", "senderName": "Herald Test"}
}

// BadCredentials carry a wrong password (535 at AUTH).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["password"] = "wrong-smtp-password-99"
	return c
}

// Address keeps the message's recipients.
func (f *Fake) Address(*provider.Message) {}

// Roots trust the fake's certificate (nil without TLS).
func (f *Fake) Roots() *x509.CertPool {
	if f.opts.NoTLS {
		return nil
	}
	return f.roots
}

// Traits: SMTP has no Retry-After, no JSON body and no idempotency key.
func (f *Fake) Traits() providertest.Traits { return providertest.Traits{} }

// Close stops the server and ends any stalled reply.
func (f *Fake) Close() {
	select {
	case <-f.done:
		return
	default:
		close(f.done)
	}
	_ = f.srv.Close()
}

// session is one client connection's state; go-smtp calls it from the
// connection's goroutine only.
type session struct {
	f       *Fake
	conn    *watchedConn
	authed  bool
	from    string
	rcpts   []string
	failure providertest.Failure
}

func (s *session) AuthMechanisms() []string {
	if s.f.opts.LoginOnly {
		return []string{sasl.Login}
	}
	return []string{sasl.Plain}
}

func (s *session) check(user, password string) error {
	if user != fakeUser || password != fakePassword {
		return smtp.ErrAuthFailed
	}
	s.authed = true
	return nil
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	switch {
	case mech == sasl.Plain && !s.f.opts.LoginOnly:
		return sasl.NewPlainServer(func(identity, user, password string) error {
			if identity != "" && identity != user {
				return smtp.ErrAuthFailed
			}
			return s.check(user, password)
		}), nil
	case mech == sasl.Login && s.f.opts.LoginOnly:
		return &loginServer{check: s.check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	failure := s.f.Next()
	if !s.authed {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	switch failure {
	case providertest.Unavailable:
		return &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 3, 2},
			Message: "Service not available, closing transmission channel"}
	case providertest.RateLimited:
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 1},
			Message: "Rate limit exceeded, try again later"}
	case providertest.Hang:
		select {
		case <-s.conn.gone:
		case <-s.f.done:
		case <-time.After(hangLimit):
		}
		return &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 4, 2}, Message: "Timeout"}
	}
	if _, err := mail.ParseAddress(from); err != nil {
		return &smtp.SMTPError{Code: 553, EnhancedCode: smtp.EnhancedCode{5, 1, 7}, Message: "Sender address rejected"}
	}
	s.from, s.failure = from, failure
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.failure == providertest.Rejected {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1},
			Message: "<" + to + ">: Recipient address rejected: User unknown in virtual mailbox table"}
	}
	if _, err := mail.ParseAddress(to); err != nil {
		return &smtp.SMTPError{Code: 553, EnhancedCode: smtp.EnhancedCode{5, 1, 3}, Message: "Recipient address rejected"}
	}
	s.rcpts = append(s.rcpts, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	d, err := parseDelivery(raw, s.rcpts)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "Message rejected: " + err.Error()}
	}
	s.f.Record(*d)
	return nil
}

func (s *session) Reset() { s.from, s.rcpts, s.failure = "", nil, providertest.None }

func (s *session) Logout() error { return nil }

// parseDelivery reads a message as a receiving server would and checks
// what a client must send: the envelope's recipients cover To and Cc,
// there is no Bcc header, and From, Date, Message-ID and MIME-Version are
// present.
func parseDelivery(raw []byte, rcpts []string) (*providertest.Delivery, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	h := msg.Header
	for _, k := range []string{"From", "Date", "Message-Id", "Mime-Version", "To", "Subject"} {
		if h.Get(k) == "" {
			return nil, errors.New("no " + k + " header")
		}
	}
	if _, ok := h["Bcc"]; ok {
		return nil, errors.New("a Bcc header would show the blind copies to every recipient")
	}
	if _, err := h.Date(); err != nil {
		return nil, err
	}
	from, err := mail.ParseAddress(h.Get("From"))
	if err != nil {
		return nil, err
	}
	d := &providertest.Delivery{From: from.Address, SenderName: from.Name, Header: http.Header(h), Body: raw,
		MessageID: h.Get("Message-Id")}
	var inHeaders []string
	for _, k := range []string{"To", "Cc"} {
		if h.Get(k) == "" {
			continue
		}
		list, err := mail.ParseAddressList(h.Get(k))
		if err != nil {
			return nil, err
		}
		for _, a := range list {
			if !providertest.Contains(rcpts, a.Address) {
				return nil, errors.New(a.Address + " is in " + k + " but not a recipient")
			}
			inHeaders = append(inHeaders, a.Address)
			if k == "To" {
				d.To = append(d.To, a.Address)
			} else {
				d.Cc = append(d.Cc, a.Address)
			}
		}
	}
	for _, r := range rcpts {
		if !providertest.Contains(inHeaders, r) {
			d.Bcc = append(d.Bcc, r)
		}
	}
	if rt := h.Get("Reply-To"); rt != "" {
		a, err := mail.ParseAddress(rt)
		if err != nil {
			return nil, err
		}
		d.ReplyTo = a.Address
	}
	if d.Subject, err = wordDecoder.DecodeHeader(h.Get("Subject")); err != nil {
		return nil, err
	}
	if err := readBody(d, msg.Header.Get("Content-Type"), h.Get("Content-Transfer-Encoding"), msg.Body, false); err != nil {
		return nil, err
	}
	if d.HTML == "" && d.Text == "" {
		return nil, errors.New("no text/plain nor text/html content")
	}
	return d, nil
}

// loginServer is the server side of AUTH LOGIN (go-sasl has only the
// client): username and password, each asked for in base64.
type loginServer struct {
	check func(user, password string) error
	step  int
	user  string
}

func (l *loginServer) Next(response []byte) ([]byte, bool, error) {
	l.step++
	switch l.step {
	case 1:
		if len(response) == 0 {
			return []byte("Username:"), false, nil
		}
		l.user = string(response)
		l.step++
		return []byte("Password:"), false, nil
	case 2:
		l.user = string(response)
		return []byte("Password:"), false, nil
	case 3:
		return nil, true, l.check(l.user, string(response))
	}
	return nil, false, errors.New("unexpected response " + strconv.Itoa(l.step))
}
