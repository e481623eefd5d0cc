// Package mailgunfake is Mailgun's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package mailgunfake

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local server speaking Mailgun's POST /v3/{domain}/messages.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

const (
	fakeKey    = "key-fake0123456789abcdef"
	fakeDomain = "mg.herald.test"
	fakePrefix = "/mailgun-proxy"
)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the origin to set as credentials.baseUrl (with a path prefix).
func (f *Fake) URL() string { return f.Srv.URL + fakePrefix }

// Credentials point the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"apiKey": fakeKey, "domain": fakeDomain, "user": "api", "from": "noreply@herald.test",
		"senderName": "Herald Test", "baseUrl": f.URL()}
}

// BadCredentials carry an API key Mailgun does not know (401 Forbidden).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["apiKey"] = "key-wrong9876543210"
	return c
}

// Address keeps the message's recipients.
func (f *Fake) Address(*provider.Message) {}

// Traits: a form body (overrides become form fields, not JSON), no Retry-After.
func (f *Fake) Traits() providertest.Traits { return providertest.Traits{Origin: true} }

func mgError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// addresses parses repeated fields, each possibly a comma-separated list.
func addresses(vs []string) ([]string, error) {
	var out []string
	for _, v := range vs {
		as, err := mail.ParseAddressList(v)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			out = append(out, a.Address)
		}
	}
	return out, nil
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	rest, ok := strings.CutPrefix(r.URL.Path, fakePrefix+"/v3/")
	domain, ok2 := strings.CutSuffix(rest, "/messages")
	if r.Method != http.MethodPost || !ok || !ok2 {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "404 page not found")
		return
	}
	if user, pass, ok := r.BasicAuth(); !ok || user != "api" || pass != fakeKey {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "Forbidden")
		return
	}
	if domain != fakeDomain {
		mgError(w, http.StatusNotFound, "Domain not found: "+domain)
		return
	}
	switch failure {
	case providertest.Rejected:
		mgError(w, http.StatusBadRequest, "to parameter is not a valid address. please check documentation")
		return
	case providertest.Unavailable:
		mgError(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	case providertest.RateLimited:
		mgError(w, http.StatusTooManyRequests, "Too many requests")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err := r.ParseMultipartForm(10 << 20); err != nil && err != http.ErrNotMultipart {
		mgError(w, http.StatusBadRequest, "Invalid form: "+err.Error())
		return
	}
	v := r.Form
	if r.MultipartForm != nil {
		v = r.MultipartForm.Value
	}
	for _, k := range []string{"from", "to", "subject"} {
		if len(v[k]) == 0 || v[k][0] == "" {
			mgError(w, http.StatusBadRequest, k+" parameter is missing")
			return
		}
	}
	from, err := mail.ParseAddress(v["from"][0])
	if err != nil {
		mgError(w, http.StatusBadRequest, "from parameter is not a valid address. please check documentation")
		return
	}
	to, err1 := addresses(v["to"])
	cc, err2 := addresses(v["cc"])
	bcc, err3 := addresses(v["bcc"])
	if err1 != nil || err2 != nil || err3 != nil {
		mgError(w, http.StatusBadRequest, "to parameter is not a valid address. please check documentation")
		return
	}
	first := func(k string) string {
		if len(v[k]) == 0 {
			return ""
		}
		return v[k][0]
	}
	if first("text") == "" && first("html") == "" && first("template") == "" {
		mgError(w, http.StatusBadRequest, "Need at least one of 'text', 'html' or 'template' parameters specified")
		return
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	d := providertest.Delivery{To: to, Cc: cc, Bcc: bcc, From: from.Address, SenderName: from.Name,
		Subject: first("subject"), HTML: first("html"), Text: first("text"), Header: r.Header.Clone(), Body: raw,
		MessageID: "<" + time.Now().UTC().Format("20060102150405") + "." + hex.EncodeToString(rnd[:]) + "." +
			strconv.FormatInt(f.seq.Add(1), 10) + "@" + fakeDomain + ">"}
	if rt := first("h:Reply-To"); rt != "" {
		a, err := mail.ParseAddress(rt)
		if err != nil {
			mgError(w, http.StatusBadRequest, "h:Reply-To is not a valid address")
			return
		}
		d.ReplyTo = a.Address
	}
	f.Record(d)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": d.MessageID, "message": "Queued. Thank you."})
}
