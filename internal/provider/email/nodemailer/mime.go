package nodemailer

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/provider"
)

// envelope is one message ready for a transaction.
type envelope struct {
	from      string   // MAIL FROM
	rcpts     []string // RCPT TO: to, cc and bcc
	data      []byte   // the message, CRLF lines, before dot-stuffing
	messageID string   // the Message-ID header's value, <id@domain>
	utf8      bool     // an address is not ASCII (SMTPUTF8)
}

// reserved are the headers the message builds itself; extra headers of
// these names are dropped rather than duplicated.
var reserved = map[string]bool{"From": true, "To": true, "Cc": true, "Bcc": true, "Reply-To": true,
	"Subject": true, "Date": true, "Message-Id": true, "Mime-Version": true, "Content-Type": true,
	"Content-Transfer-Encoding": true}

// buildEnvelope checks the addresses and writes the MIME message: From,
// To, Cc (never Bcc), Reply-To, Subject (RFC 2047 when not ASCII), Date,
// Message-ID, the extra headers, and a multipart/alternative body of a
// text and an HTML part, UTF-8 in quoted-printable.
func buildEnvelope(m *provider.Message, from, name string, now time.Time) (*envelope, error) {
	fromAddr, err := address("from", from)
	if err != nil {
		return nil, err
	}
	env := &envelope{from: fromAddr}
	to, err := addresses("to", m.To)
	if err != nil {
		return nil, err
	}
	if len(to) == 0 {
		return nil, provider.Permanentf("the message has no recipient")
	}
	cc, err := addresses("cc", m.Cc)
	if err != nil {
		return nil, err
	}
	bcc, err := addresses("bcc", m.Bcc)
	if err != nil {
		return nil, err
	}
	env.rcpts = append(append(append(env.rcpts, to...), cc...), bcc...)
	for _, a := range append([]string{fromAddr}, env.rcpts...) {
		if !ascii(a) {
			env.utf8 = true
		}
	}
	id := m.ID
	if id == "" || strings.ContainsAny(id, "<>@ \r\n") {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		id = hex.EncodeToString(b)
	}
	domain := "localhost"
	if i := strings.LastIndexByte(fromAddr, '@'); i >= 0 && i < len(fromAddr)-1 {
		domain = fromAddr[i+1:]
	}
	env.messageID = "<" + id + "@" + domain + ">"

	var b bytes.Buffer
	b.Grow(len(m.HTML) + len(m.Text) + 1024)
	header(&b, "From", (&mail.Address{Name: name, Address: fromAddr}).String())
	list(&b, "To", to)
	if len(cc) > 0 {
		list(&b, "Cc", cc)
	}
	if m.ReplyTo != "" {
		r, err := address("replyTo", m.ReplyTo)
		if err != nil {
			return nil, err
		}
		header(&b, "Reply-To", r)
	}
	header(&b, "Subject", encodeWords(m.Subject))
	header(&b, "Date", now.Format(time.RFC1123Z))
	header(&b, "Message-ID", env.messageID)
	header(&b, "MIME-Version", "1.0")
	keys := make([]string, 0, len(m.Headers))
	for k := range m.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !headerName(k) {
			return nil, provider.Permanentf("header %q: not a valid header name", k)
		}
		if reserved[mimeKey(k)] {
			continue
		}
		header(&b, k, encodeWords(strings.Join(strings.Fields(m.Headers[k]), " ")))
	}
	switch {
	case m.HTML != "" && m.Text != "":
		boundary := newBoundary()
		header(&b, "Content-Type", `multipart/alternative; boundary="`+boundary+`"`)
		b.WriteString("\r\n")
		part(&b, boundary, "text/plain", m.Text)
		part(&b, boundary, "text/html", m.HTML)
		b.WriteString("--" + boundary + "--\r\n")
	case m.HTML != "":
		body(&b, "text/html", m.HTML)
	default:
		body(&b, "text/plain", m.Text)
	}
	env.data = b.Bytes()
	return env, nil
}

// address checks one address ("a@b" or "Name <a@b>") and returns a@b.
func address(field, s string) (string, error) {
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "", provider.Permanentf("%s %q is not an e-mail address", field, s)
	}
	return a.Address, nil
}

func addresses(field string, list []string) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, s := range list {
		a, err := address(field, s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// headerName reports a valid field name: printable ASCII without colon.
func headerName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' || k[i] == ':' {
			return false
		}
	}
	return true
}

// mimeKey canonicalises a header name for the reserved check.
func mimeKey(k string) string {
	parts := strings.Split(strings.ToLower(k), "-")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "-")
}

// encodeWords encodes a header text as RFC 2047 encoded words when it is
// not ASCII, one word per folded line.
func encodeWords(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	if ascii(s) {
		return s
	}
	return strings.ReplaceAll(mime.QEncoding.Encode("UTF-8", s), "?= =?", "?=\r\n =?")
}

func header(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(value)
	b.WriteString("\r\n")
}

// list writes an address header, folded before a line grows past 78.
func list(b *bytes.Buffer, name string, addrs []string) {
	b.WriteString(name)
	b.WriteString(":")
	n := len(name) + 1
	for i, a := range addrs {
		if i > 0 {
			b.WriteString(",")
			n++
		}
		if i > 0 && n+1+len(a) > 78 {
			b.WriteString("\r\n")
			n = 0
		}
		b.WriteString(" ")
		b.WriteString(a)
		n += 1 + len(a)
	}
	b.WriteString("\r\n")
}

func newBoundary() string {
	r := make([]byte, 15)
	_, _ = rand.Read(r)
	return "herald-" + hex.EncodeToString(r)
}

func part(b *bytes.Buffer, boundary, typ, content string) {
	b.WriteString("--" + boundary + "\r\n")
	body(b, typ, content)
	// The line break before a boundary belongs to the boundary.
	b.WriteString("\r\n")
}

// body writes a part's headers and its quoted-printable content.
func body(b *bytes.Buffer, typ, content string) {
	header(b, "Content-Type", typ+"; charset=UTF-8")
	header(b, "Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	w := quotedprintable.NewWriter(b)
	_, _ = w.Write([]byte(content))
	_ = w.Close()
}
