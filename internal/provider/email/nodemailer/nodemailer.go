// Package nodemailer delivers e-mail over SMTP to the integration's own
// server ("Custom SMTP", Novu's nodemailer provider): implicit TLS or
// STARTTLS, AUTH PLAIN or LOGIN, and a pool of authenticated connections
// reused across sends so that no message pays for a dial and a handshake.
//
// DKIM signing (Novu's domain, accountSid and secretKey credentials) is not
// done: the keys are accepted and ignored; sign at the relay instead.
package nodemailer

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/provider"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "nodemailer", Channel: provider.Email,
	Credentials: []provider.Credential{
		{Key: "host", Required: true},
		{Key: "port", Required: true},
		{Key: "from", Required: true},
		{Key: "secure", Type: provider.TypeBoolean},
		{Key: "user"},
		{Key: "password", Secret: true},
		{Key: "requireTls", Type: provider.TypeBoolean},
		{Key: "ignoreTls", Type: provider.TypeBoolean},
		{Key: "tlsOptions", Type: provider.TypeObject},
		{Key: "senderName"},
		// DKIM's domain, private key and selector: accepted, not used (see above).
		{Key: "domain"},
		{Key: "secretKey", Secret: true},
		{Key: "accountSid"},
	},
	New:         New,
	Concurrency: defaultConns,
}

// Pool sizes and lifetimes. A sender keeps at most Config.Concurrency
// connections open (defaultConns when unset; sends beyond that wait for
// one), each reused for up to maxMessages messages and closed once idle for
// idleTimeout: well under the few minutes after which servers drop a silent
// client. An integration's configurations.maxConcurrency raises the count.
const (
	defaultConns   = 32
	maxMessages    = 100
	idleTimeout    = 30 * time.Second
	defaultTimeout = 2 * time.Minute
)

type sender struct {
	cfg                           provider.Config
	addr, host                    string
	secure, requireTLS, ignoreTLS bool
	tls                           *tls.Config
	user, password                string
	helo                          string
	secrets                       []string
	pool                          *pool
}

// New builds a sender for one integration. Its connections are pooled: call
// Close when the integration changes or Herald stops.
func New(cfg provider.Config) (provider.Sender, error) {
	c := cfg.Credentials
	host := c.String("host")
	if host == "" {
		return nil, provider.Permanentf("credentials.host is required")
	}
	secure := c.Bool("secure")
	port := c.String("port")
	if port == "" {
		port = "587"
		if secure {
			port = "465"
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return nil, provider.Permanentf("credentials.port %q is not a TCP port", port)
	}
	s := &sender{
		cfg: cfg, addr: net.JoinHostPort(host, port), host: host, secure: secure,
		requireTLS: c.Bool("requireTls"), ignoreTLS: c.Bool("ignoreTls"),
		user: c.String("user"), password: c.String("password"), helo: heloName(),
	}
	if s.requireTLS && s.ignoreTLS {
		return nil, provider.Permanentf("credentials.requireTls and credentials.ignoreTls contradict each other")
	}
	if cfg.Now == nil {
		s.cfg.Now = time.Now
	}
	t, err := tlsConfig(cfg.TLS, host, c["tlsOptions"])
	if err != nil {
		return nil, err
	}
	s.tls = t
	s.secrets = cfg.Secrets()
	conns := cfg.Concurrency
	if conns <= 0 {
		conns = defaultConns
	}
	s.pool = newPool(conns, idleTimeout, cfg)
	return s, nil
}

// tlsConfig derives the connection's TLS configuration from Herald's (root
// CAs) and the integration's tlsOptions, Node's tls.connect options, of
// which these are honoured: rejectUnauthorized:false (skip certificate
// verification, for self-signed relays), servername, and minVersion
// ("TLSv1.2", "TLSv1.3"). Novu passes tlsOptions only with secure:true;
// Herald applies them to STARTTLS too. The object may arrive as JSON text.
func tlsConfig(base *tls.Config, host string, opts any) (*tls.Config, error) {
	var t *tls.Config
	if base != nil {
		t = base.Clone()
	} else {
		t = &tls.Config{}
	}
	t.ServerName = host
	if t.MinVersion < tls.VersionTLS12 {
		t.MinVersion = tls.VersionTLS12
	}
	var o map[string]any
	switch v := opts.(type) {
	case map[string]any:
		o = v
	case string:
		if strings.TrimSpace(v) != "" {
			if err := json.Unmarshal([]byte(v), &o); err != nil {
				return nil, provider.Permanentf("credentials.tlsOptions is not a JSON object: %v", err)
			}
		}
	}
	if v, ok := o["rejectUnauthorized"]; ok && (v == false || v == "false") {
		t.InsecureSkipVerify = true
	}
	if name, ok := o["servername"].(string); ok && name != "" {
		t.ServerName = name
	}
	switch o["minVersion"] {
	case "TLSv1.3":
		t.MinVersion = tls.VersionTLS13
	case "TLSv1", "TLSv1.1":
		// Go refuses to speak below 1.2 to a server by default; keep 1.2.
	}
	return t, nil
}

// heloName is the name Herald greets servers with: the machine's host
// name when it looks like one, else "localhost".
func heloName() string {
	h, err := os.Hostname()
	if err != nil || h == "" || strings.ContainsAny(h, " \r\n<>") {
		return "localhost"
	}
	return h
}

// Send delivers one message over a pooled connection.
func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	c := s.cfg.Credentials
	from, name := c.String("from"), c.String("senderName")
	if m.From != "" {
		from = m.From
	}
	if m.SenderName != "" {
		name = m.SenderName
	}
	env, err := buildEnvelope(m, from, name, s.cfg.Now())
	if err != nil {
		return nil, err
	}
	if err := s.pool.acquire(ctx); err != nil {
		return nil, &provider.Error{Class: provider.Transient, Reason: "waiting for a free SMTP connection: " + err.Error(), Err: err}
	}
	defer s.pool.release()
	for attempt := 0; ; attempt++ {
		cn, reused := s.pool.get()
		if cn == nil {
			if cn, err = s.open(ctx); err != nil {
				return nil, err
			}
		}
		reply, stale, err := s.transact(ctx, cn, env)
		if err == nil {
			s.pool.put(cn)
			return &provider.Result{ProviderMessageID: env.messageID, Raw: reply}, nil
		}
		cn.close()
		// A pooled connection the server closed while it idled fails on
		// its first reply; nothing was sent, so a fresh one may try.
		if reused && stale && attempt == 0 && ctx.Err() == nil {
			continue
		}
		if cause := ctx.Err(); cause != nil {
			// The deadline or cancellation cut the conversation: say so
			// rather than only "i/o timeout".
			pe := provider.AsError(err)
			pe.Class = provider.Transient
			pe.Reason += " (" + cause.Error() + ")"
			return nil, pe
		}
		return nil, err
	}
}

// Close closes the pooled connections; sends in flight finish first.
func (s *sender) Close() error {
	s.pool.close()
	return nil
}

// redact removes the credentials from a text kept by Herald.
func (s *sender) redact(txt string) string { return provider.Redact(txt, s.secrets) }

// oneLine flattens a multi-line SMTP reply for a reason.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// describe formats an SMTP reply as the raw answer.
func describe(code int, msg string) string { return fmt.Sprintf("%d %s", code, msg) }
