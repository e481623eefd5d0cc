// Package mailgun delivers e-mail through Mailgun's Messages API
// (POST /v3/{domain}/messages, multipart/form-data).
//
// The trigger's overrides become form fields, since the body is not JSON:
// Mailgun's options ("o:tag", "o:tracking"…), headers ("h:X-…"),
// variables ("v:…") and any other field ("template", "t:variables"). A
// value replaces Herald's field of that name; a list repeats the field;
// an object is sent as its JSON, as Mailgun takes variables.
package mailgun

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/herald-notify/herald/internal/provider"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "mailgun", Channel: provider.Email,
	Credentials: []provider.Credential{
		{Key: "apiKey", Required: true, Secret: true},
		{Key: "domain", Required: true},
		{Key: "from", Required: true},
		{Key: "user"},
		{Key: "baseUrl"},
		{Key: "senderName"},
	},
	New: New,
}

// origin is Mailgun's US region; EU integrations set baseUrl
// https://api.eu.mailgun.net.
const origin = "https://api.mailgun.net"

type sender struct {
	cfg  provider.Config
	base string
}

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) {
	base, err := provider.BaseURL(cfg.Credentials, origin)
	if err != nil {
		return nil, err
	}
	if cfg.Credentials.String("domain") == "" {
		return nil, provider.Permanentf("credentials.domain is required")
	}
	return &sender{cfg: cfg, base: base}, nil
}

// form is an ordered multipart form whose fields may repeat.
type form struct {
	names  []string
	values map[string][]string
}

func (f *form) add(name string, vs ...string) {
	if _, ok := f.values[name]; !ok {
		f.names = append(f.names, name)
	}
	f.values[name] = append(f.values[name], vs...)
}

func (f *form) set(name string, vs ...string) {
	delete(f.values, name)
	for i, n := range f.names {
		if n == name {
			f.names = append(f.names[:i], f.names[i+1:]...)
			break
		}
	}
	f.add(name, vs...)
}

func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	c := s.cfg.Credentials
	from, name := c.String("from"), c.String("senderName")
	if m.From != "" {
		from = m.From
	}
	if m.SenderName != "" {
		name = m.SenderName
	}
	f := &form{values: map[string][]string{}}
	f.add("from", provider.Address(name, from))
	f.add("to", m.To...)
	if len(m.Cc) > 0 {
		f.add("cc", m.Cc...)
	}
	if len(m.Bcc) > 0 {
		f.add("bcc", m.Bcc...)
	}
	f.add("subject", m.Subject)
	if m.Text != "" {
		f.add("text", m.Text)
	}
	if m.HTML != "" {
		f.add("html", m.HTML)
	}
	if m.ReplyTo != "" {
		f.add("h:Reply-To", m.ReplyTo)
	}
	keys := make([]string, 0, len(m.Headers))
	for k := range m.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f.add("h:"+k, m.Headers[k])
	}
	if m.ID != "" {
		f.add("v:heraldMessageId", m.ID)
	}
	if err := overrides(f, m.Overrides); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, n := range f.names {
		for _, v := range f.values[n] {
			_ = w.WriteField(n, v)
		}
	}
	_ = w.Close()
	user := c.String("user")
	if user == "" {
		user = "api"
	}
	h := http.Header{}
	h.Set("Content-Type", w.FormDataContentType())
	h.Set("Accept", "application/json")
	req := &provider.Request{Method: http.MethodPost, URL: s.base + "/v3/" + url.PathEscape(c.String("domain")) + "/messages",
		Header: h, Body: buf.Bytes(), Secrets: s.cfg.Secrets()}
	h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+c.String("apiKey"))))
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	msg := provider.Path(resp.Body, "message")
	if !resp.OK() {
		if msg == "" {
			msg = string(bytes.TrimSpace(resp.Body)) // 401 answers a bare "Forbidden"
		}
		return nil, provider.StatusError(resp, msg)
	}
	id := provider.Path(resp.Body, "id")
	if id == "" {
		return nil, &provider.Error{Class: provider.Transient, Status: resp.Status, Reason: "Mailgun answered without a message id", Raw: resp.Raw}
	}
	return &provider.Result{ProviderMessageID: id, Raw: resp.Raw}, nil
}

// overrides sets the trigger's overrides as form fields (see the package doc).
func overrides(f *form, o map[string]any) error {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var vs []string
		switch v := o[k].(type) {
		case []any:
			for _, x := range v {
				s, err := field(x)
				if err != nil {
					return err
				}
				vs = append(vs, s)
			}
		default:
			s, err := field(v)
			if err != nil {
				return err
			}
			vs = []string{s}
		}
		f.set(k, vs...)
	}
	return nil
}

func field(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case nil:
		return "", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", provider.Permanentf("overrides: %v", err)
	}
	return string(b), nil
}
