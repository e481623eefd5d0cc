package provider

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is what a provider's constructor gets: the integration's
// credentials and the means to reach the provider.
type Config struct {
	// Credentials are the integration's credentials (Novu's keys).
	Credentials Credentials
	// HTTP makes every HTTP call; its transport refuses private networks
	// unless allowed, and it has no overall timeout (the context has one).
	HTTP *http.Client
	// Dial opens TCP connections (SMTP) through the same guard.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS is the base TLS configuration (root CAs); nil means the system's.
	TLS *tls.Config
	// Now is the clock (token lifetimes, signatures).
	Now func() time.Time
	// Logger reports what a sender does in the background (pool closes).
	Logger *slog.Logger
}

// Entry is one provider of the registry table: its channel, the schema of
// its credentials and its constructor.
type Entry struct {
	ID      string
	Channel Channel
	// Required are the credential keys without which it cannot send.
	Required []string
	// Optional are the other credential keys it reads.
	Optional []string
	// New builds a sender for one integration.
	New func(Config) (Sender, error)
}

// Credentials are an integration's credentials: string values, booleans,
// and objects (tlsOptions).
type Credentials map[string]any

// ParseCredentials decodes stored credentials.
func ParseCredentials(raw []byte) (Credentials, error) {
	c := Credentials{}
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("provider: credentials: %w", err)
	}
	return c, nil
}

// String returns the trimmed string value of key ("" when absent). Numbers
// are accepted and formatted (a port sent as 587).
func (c Credentials) String(key string) string {
	switch v := c[key].(type) {
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// Bool returns the boolean value of key; the strings "true" and "false" count.
func (c Credentials) Bool(key string) bool {
	switch v := c[key].(type) {
	case bool:
		return v
	case string:
		b, _ := strconv.ParseBool(strings.TrimSpace(v))
		return b
	}
	return false
}

// Secrets returns the non-empty string values of the keys that hold
// secrets, for redaction of what providers answer.
func (c Credentials) Secrets() []string {
	var out []string
	for _, k := range secretKeys {
		if s := c.String(k); len(s) >= 4 {
			out = append(out, s)
		}
	}
	return out
}

// secretKeys are the credential keys whose values must never be shown.
var secretKeys = []string{"apiKey", "secretKey", "password", "token", "apiToken", "serviceAccount", "accessKey",
	"signingSecret"}

// Missing lists the required keys of e that c lacks (empty strings count as missing).
func (e Entry) Missing(c Credentials) []string {
	var out []string
	for _, k := range e.Required {
		if _, isBool := c[k].(bool); !isBool && c.String(k) == "" {
			out = append(out, k)
		}
	}
	return out
}

// Registry is the table of providers Herald can deliver through.
type Registry struct{ byID map[string]Entry }

// NewRegistry builds a registry from entries; a duplicate id panics (a programming error).
func NewRegistry(entries ...Entry) *Registry {
	r := &Registry{byID: map[string]Entry{}}
	for _, e := range entries {
		if _, dup := r.byID[e.ID]; dup {
			panic("provider: " + e.ID + " registered twice")
		}
		if info, ok := Lookup(e.ID); !ok || info.Channel != e.Channel {
			panic("provider: " + e.ID + " is not a " + string(e.Channel) + " provider of the catalogue")
		}
		r.byID[e.ID] = e
	}
	return r
}

// Get returns the entry of a provider id.
func (r *Registry) Get(id string) (Entry, bool) {
	e, ok := r.byID[id]
	return e, ok
}

// IDs lists the registered provider ids, sorted.
func (r *Registry) IDs() []string {
	out := make([]string, 0, len(r.byID))
	for id := range r.byID {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
