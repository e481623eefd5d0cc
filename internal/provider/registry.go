package provider

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
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
	// Concurrency is the most calls the engine makes to this integration at
	// once; a sender that keeps connections (SMTP) keeps up to this many.
	Concurrency int
	// secrets are the values of the credentials the entry marks Secret;
	// Entry.Sender sets them.
	secrets []string
}

// Secrets returns the values of the integration's secret credentials (the
// keys its provider's entry marks Secret), which a sender redacts from what
// the provider answers. Only a sender built by Entry.Sender has them.
func (c Config) Secrets() []string { return slices.Clone(c.secrets) }

// Entry is one provider of the registry table: its channel, the schema of
// its credentials and its constructor.
type Entry struct {
	ID      string
	Channel Channel
	// Credentials are the credential keys it reads (Novu's keys), the one
	// list the API's validation, its OpenAPI schema and redaction derive
	// from.
	Credentials []Credential
	// New builds a sender for one integration; callers use Sender.
	New func(Config) (Sender, error)
	// Concurrency is how many calls one integration of this provider has
	// in flight by default (0: the process's default, --provider-concurrency);
	// an integration's configurations.maxConcurrency overrides it. SMTP's
	// is its connections: a server counts them.
	Concurrency int
	// Casing is how its API spells request keys: a Novu Framework app's
	// provider overrides (camelCase) are turned into it.
	Casing Casing
}

// Credential is one credential key a provider reads.
type Credential struct {
	// Key is the key in the integration's credentials object.
	Key string
	// Type is its value's JSON type: TypeString when empty.
	Type string
	// Required: the provider cannot send without it, so an active
	// integration must have it.
	Required bool
	// Secret: its value is redacted from the provider's answers that Herald
	// keeps (execution details, errors).
	Secret bool
}

// The JSON types of credential values (OpenAPI's names).
const (
	TypeString  = "string"
	TypeBoolean = "boolean"
	TypeObject  = "object" // free-form (tlsOptions)
)

// JSONType is the key's JSON type.
func (c Credential) JSONType() string {
	if c.Type == "" {
		return TypeString
	}
	return c.Type
}

// Sender builds a sender for one integration whose Config knows the values
// of the entry's secret credentials.
func (e Entry) Sender(cfg Config) (Sender, error) {
	cfg.secrets = e.Secrets(cfg.Credentials)
	return e.New(cfg)
}

// Secrets returns the non-empty values (at least 4 characters: shorter
// ones would redact ordinary words) of the keys of c that e marks Secret.
func (e Entry) Secrets(c Credentials) []string {
	var out []string
	for _, k := range e.Credentials {
		if s := c.String(k.Key); k.Secret && len(s) >= 4 {
			out = append(out, s)
		}
	}
	return out
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

// Required lists the keys without which e cannot send.
func (e Entry) Required() []string {
	var out []string
	for _, k := range e.Credentials {
		if k.Required {
			out = append(out, k.Key)
		}
	}
	return out
}

// Missing lists the required keys of e that c lacks (empty strings count as missing).
func (e Entry) Missing(c Credentials) []string {
	var out []string
	for _, k := range e.Required() {
		if _, isBool := c[k].(bool); !isBool && c.String(k) == "" {
			out = append(out, k)
		}
	}
	return out
}

// Registry is the table of providers Herald can deliver through.
type Registry struct {
	byID map[string]Entry
	keys []CredentialKey
}

// NewRegistry builds a registry from entries. A duplicate id, or a
// credential key given two types or secrecies, panics (a programming error).
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
	r.keys = credentialKeys(r.IDs(), r.byID)
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
