// Package config holds Herald's one configuration struct, filled from flags
// and HERALD_* environment variables in cmd/herald and passed down from there.
package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/sandbox"
)

// MinAPIKeyLength is the length a custom API key (HERALD_API_KEY) must have
// at least: a short key could be guessed.
const MinAPIKeyLength = 24

// Config is Herald's configuration.
type Config struct {
	// Addr is the listen address of the API.
	Addr string
	// DataDir holds the SQLite database and the generated secret.
	DataDir string
	// DatabaseURL selects PostgreSQL when it is a postgres:// URL.
	DatabaseURL string
	// APIKey, when set at first start, is the development environment's key.
	APIKey string
	// Secret derives the credential-encryption and token-signing keys.
	Secret string
	// Role is "all", "api" or "worker".
	Role string
	// RateLimit is requests per second per environment (0: off).
	RateLimit float64
	// AuthFailureLimit is failed authentications per minute per client
	// address before it gets 429s (0: off).
	AuthFailureLimit int
	// LogFormat is "text" or "json"; LogLevel is debug, info, warn or error.
	LogFormat, LogLevel string
	// Render bounds each render of a step's templates (zero: the defaults).
	Render sandbox.Limits
	// Delivery configures the calls to providers.
	Delivery Delivery
	// Workers is the number of job claim loops of a worker process.
	Workers int
	// JobsInFlight bounds the jobs a worker process has claimed and not
	// yet finished.
	JobsInFlight int
	// TriggerWriters is how many trigger groups are written at once on
	// PostgreSQL (0: derived from the database's round trip).
	TriggerWriters int
	// DebugAddr, when set, serves Go's profiler (and the metrics) there.
	DebugAddr string
	// MetricsToken, when set, is the Bearer token GET /metrics of the API
	// (and of a worker) requires; empty leaves it open.
	MetricsToken string
	// CORSOrigins are the origins whose pages may call the API,
	// comma-separated ("*", the default when empty: any origin).
	CORSOrigins string
	// InboxSessionTTL is how long an inbox session token is valid (zero:
	// the server's default).
	InboxSessionTTL time.Duration
	// DemoPage serves the demo inbox page at /demo (development
	// environment only).
	DemoPage bool
	// WebhookRetrySchedule is the delay of each outbound webhook attempt,
	// comma-separated Go durations ("" is the default schedule).
	WebhookRetrySchedule string
	// WebhookTimeout is the time limit of one outbound webhook attempt
	// (zero: the default).
	WebhookTimeout time.Duration
	// Retention is how long triggers and in-app messages are kept, as
	// given (RetentionSettings.Parse reads it).
	Retention RetentionSettings
}

// Delivery configures the calls to providers.
type Delivery struct {
	// AllowPrivateNetworks lets provider calls and webhooks reach loopback,
	// private, link-local and metadata addresses.
	AllowPrivateNetworks bool
	// Timeout bounds one provider call.
	Timeout time.Duration
	// Attempts is the tries of a transient failure on one integration before failover.
	Attempts int
	// PerIntegration bounds the calls in flight to one integration per
	// process (an integration's configurations.maxConcurrency overrides it).
	PerIntegration int
}

// Validate reports settings Herald refuses to start with.
func (c Config) Validate() error {
	if c.APIKey != "" {
		for i := 0; i < len(c.APIKey); i++ {
			if c.APIKey[i] <= ' ' || c.APIKey[i] > '~' {
				return fmt.Errorf("config: HERALD_API_KEY (--api-key) must be printable ASCII without spaces")
			}
		}
		if len(c.APIKey) < MinAPIKeyLength {
			return fmt.Errorf("config: HERALD_API_KEY (--api-key) must have at least %d characters, not %d: a short key can be guessed"+
				" (leave it unset to have a random key generated)", MinAPIKeyLength, len(c.APIKey))
		}
	}
	if _, err := c.Origins(); err != nil {
		return err
	}
	if !printable(c.MetricsToken) {
		return fmt.Errorf("config: HERALD_METRICS_TOKEN (--metrics-token) must be printable ASCII without spaces")
	}
	if c.InboxSessionTTL < 0 {
		return fmt.Errorf("config: HERALD_INBOX_SESSION_TTL (--inbox-session-ttl) must not be negative")
	}
	if _, err := c.Retention.Parse(); err != nil {
		return err
	}
	return nil
}

// printable reports whether s is printable ASCII without spaces: a value
// an Authorization header can carry as it is.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Origins parses CORSOrigins: "*", or origins such as
// https://app.example.com or http://localhost:5173 (scheme, host and
// port; no path). Empty means "*".
func (c Config) Origins() ([]string, error) {
	var out []string
	for _, o := range strings.Split(c.CORSOrigins, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
				(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
				return nil, fmt.Errorf("config: HERALD_CORS_ORIGINS (--cors-origins): %q is not an origin"+
					" (scheme://host[:port], e.g. https://app.example.com) or *", o)
			}
			o = strings.TrimSuffix(o, "/")
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		out = []string{"*"}
	}
	return out, nil
}

// Postgres reports whether the configuration selects PostgreSQL.
func (c Config) Postgres() bool {
	return strings.HasPrefix(c.DatabaseURL, "postgres://") || strings.HasPrefix(c.DatabaseURL, "postgresql://")
}

// SQLitePath is the embedded database file.
func (c Config) SQLitePath() string { return filepath.Join(c.DataDir, "herald.db") }

// SecretPath is where a generated secret is kept.
func (c Config) SecretPath() string { return filepath.Join(c.DataDir, "secret") }
