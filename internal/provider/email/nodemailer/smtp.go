package nodemailer

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/herald-notify/herald/internal/provider"
)

// conn is one SMTP connection, greeted, secured and authenticated, between
// mail transactions.
type conn struct {
	raw  net.Conn // the TCP connection: deadlines are set on it
	text *textproto.Conn
	ext  map[string]string // EHLO extensions, upper-case keywords
	// used is when the last transaction ended; sent counts them.
	used time.Time
	sent int
}

// aLongTimeAgo is a deadline in the past: it unblocks every read and write.
var aLongTimeAgo = time.Unix(1, 0)

// bind applies ctx to the connection: its deadline (or defaultTimeout),
// and its cancellation, which unblocks a pending read or write at once. The
// returned func detaches ctx and reports whether the connection is still
// usable (false when the cancellation fired: its deadline may be in the past).
func (cn *conn) bind(ctx context.Context) func() bool {
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Now().Add(defaultTimeout)
	}
	_ = cn.raw.SetDeadline(d)
	stop := context.AfterFunc(ctx, func() { _ = cn.raw.SetDeadline(aLongTimeAgo) })
	return func() bool {
		detached := stop()
		_ = cn.raw.SetDeadline(time.Time{})
		return detached
	}
}

// cmd sends one command and reads its reply, which must have the code
// expect (one digit or two match a class, as textproto reads them).
func (cn *conn) cmd(expect int, format string, args ...any) (int, string, error) {
	if err := cn.text.PrintfLine(format, args...); err != nil {
		return 0, "", err
	}
	return cn.text.ReadResponse(expect)
}

// close ends the connection without a goodbye.
func (cn *conn) close() { _ = cn.raw.Close() }

// quit says goodbye within a second and closes the connection.
func (cn *conn) quit() {
	_ = cn.raw.SetDeadline(time.Now().Add(time.Second))
	_, _, _ = cn.cmd(221, "QUIT")
	_ = cn.raw.Close()
}

// open dials the server through Herald's network guard and takes the
// connection through greeting, EHLO, TLS and AUTH.
func (s *sender) open(ctx context.Context) (*conn, error) {
	raw, err := s.cfg.Dial(ctx, "tcp", s.addr)
	if err != nil {
		return nil, s.fail("connecting to "+s.addr, err)
	}
	cn := &conn{raw: raw}
	detach := cn.bind(ctx)
	err = s.handshake(ctx, cn)
	if detach() && err == nil {
		return cn, nil
	}
	if err == nil {
		err = s.fail("connecting to "+s.addr, ctx.Err())
	}
	cn.close()
	return nil, err
}

func (s *sender) handshake(ctx context.Context, cn *conn) error {
	var c net.Conn = cn.raw
	if s.secure {
		tc := tls.Client(c, s.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			return s.fail("TLS handshake", err)
		}
		c = tc
	}
	cn.text = textproto.NewConn(c)
	if _, _, err := cn.text.ReadResponse(220); err != nil {
		return s.fail("greeting", err)
	}
	if err := s.ehlo(cn); err != nil {
		return err
	}
	if !s.secure && !s.ignoreTLS {
		if _, ok := cn.ext["STARTTLS"]; ok {
			if _, _, err := cn.cmd(220, "STARTTLS"); err != nil {
				return s.fail("STARTTLS", err)
			}
			tc := tls.Client(c, s.tls)
			if err := tc.HandshakeContext(ctx); err != nil {
				return s.fail("STARTTLS handshake", err)
			}
			cn.text = textproto.NewConn(tc)
			if err := s.ehlo(cn); err != nil {
				return err
			}
		} else if s.requireTLS {
			cn.quit()
			return provider.Permanentf("the SMTP server %s does not offer STARTTLS and requireTls is set: nothing was sent", s.addr)
		}
	}
	if s.user != "" && s.password != "" {
		return s.auth(cn)
	}
	return nil
}

// ehlo greets the server and reads its extensions; a server that does not
// know EHLO is greeted with HELO.
func (s *sender) ehlo(cn *conn) error {
	_, msg, err := cn.cmd(250, "EHLO %s", s.helo)
	if err != nil {
		var te *textproto.Error
		if !errors.As(err, &te) || te.Code < 500 {
			return s.fail("EHLO", err)
		}
		if _, msg, err = cn.cmd(250, "HELO %s", s.helo); err != nil {
			return s.fail("HELO", err)
		}
		cn.ext = map[string]string{}
		return nil
	}
	cn.ext = map[string]string{}
	lines := strings.Split(msg, "\n")
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(l), " ")
		cn.ext[strings.ToUpper(k)] = v
	}
	return nil
}

// auth authenticates with PLAIN, or LOGIN when the server offers only that.
func (s *sender) auth(cn *conn) error {
	mechs := strings.Fields(strings.ToUpper(cn.ext["AUTH"]))
	enc := base64.StdEncoding.EncodeToString
	if !slices.Contains(mechs, "PLAIN") && slices.Contains(mechs, "LOGIN") {
		if _, _, err := cn.cmd(334, "AUTH LOGIN"); err != nil {
			return s.fail("AUTH LOGIN", err)
		}
		if _, _, err := cn.cmd(334, "%s", enc([]byte(s.user))); err != nil {
			return s.fail("AUTH LOGIN", err)
		}
		if _, _, err := cn.cmd(235, "%s", enc([]byte(s.password))); err != nil {
			return s.fail("AUTH LOGIN", err)
		}
		return nil
	}
	if _, _, err := cn.cmd(235, "AUTH PLAIN %s", enc([]byte("\x00"+s.user+"\x00"+s.password))); err != nil {
		return s.fail("AUTH PLAIN", err)
	}
	return nil
}

// transact runs one mail transaction. MAIL and the RCPTs are pipelined
// when the server allows it (RFC 2920); DATA waits for their replies so
// that a refused recipient stops the message. stale reports a failure on
// the transaction's first reply by a connection that is gone (closed by
// the server while it idled): nothing was delivered.
func (s *sender) transact(ctx context.Context, cn *conn, env *envelope) (reply string, stale bool, err error) {
	detach := cn.bind(ctx)
	defer func() {
		if !detach() && err == nil {
			err = s.fail("sending", ctx.Err())
		}
	}()
	mail := "MAIL FROM:<" + env.from + ">"
	if _, ok := cn.ext["SIZE"]; ok {
		mail += fmt.Sprintf(" SIZE=%d", len(env.data))
	}
	if env.utf8 {
		if _, ok := cn.ext["SMTPUTF8"]; ok {
			mail += " SMTPUTF8"
		}
	}
	cmds := make([]string, 0, 1+len(env.rcpts))
	cmds = append(cmds, mail)
	for _, r := range env.rcpts {
		cmds = append(cmds, "RCPT TO:<"+r+">")
	}
	if _, ok := cn.ext["PIPELINING"]; ok {
		for _, c := range cmds {
			_, _ = cn.text.W.WriteString(c + "\r\n")
		}
		if err := cn.text.W.Flush(); err != nil {
			return "", gone(err), s.fail("MAIL FROM", err)
		}
		for i := range cmds {
			if _, _, err := cn.text.ReadResponse(25); err != nil {
				return "", i == 0 && gone(err), s.fail(step(i, env), err)
			}
		}
	} else {
		for i, c := range cmds {
			if _, _, err := cn.cmd(25, "%s", c); err != nil {
				return "", i == 0 && gone(err), s.fail(step(i, env), err)
			}
		}
	}
	if _, _, err := cn.cmd(354, "DATA"); err != nil {
		return "", false, s.fail("DATA", err)
	}
	w := cn.text.DotWriter()
	if _, err := w.Write(env.data); err != nil {
		return "", false, s.fail("DATA", err)
	}
	if err := w.Close(); err != nil {
		return "", false, s.fail("DATA", err)
	}
	code, msg, err := cn.text.ReadResponse(250)
	if err != nil {
		return "", false, s.fail("end of DATA", err)
	}
	cn.sent++
	return s.redact(describe(code, msg)), false, nil
}

// step names the i-th command of a transaction for a failure's reason.
func step(i int, env *envelope) string {
	if i == 0 {
		return "MAIL FROM"
	}
	return "RCPT TO " + env.rcpts[i-1]
}

// gone reports an error of a connection the other side has closed.
func gone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// fail classifies a failure at one step of the conversation: a 4xx reply
// is transient, a 5xx one permanent (550 unknown user, 535 bad
// credentials); a network failure, a timeout or a garbled reply transient;
// a refusal by the network guard or a certificate that does not verify
// permanent. No credential reaches the reason.
func (s *sender) fail(stepName string, err error) *provider.Error {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe
	}
	var te *textproto.Error
	if errors.As(err, &te) {
		e := &provider.Error{Class: provider.Permanent, Status: te.Code, Reason: s.redact(stepName + ": " + oneLine(te.Msg)),
			Raw: s.redact(describe(te.Code, te.Msg)), Err: err}
		if te.Code >= 400 && te.Code < 500 {
			e.Class = provider.Transient
		}
		return e
	}
	e := provider.AsError(err)
	var proto textproto.ProtocolError
	if errors.As(err, &proto) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		e.Class = provider.Transient
	}
	e.Reason = s.redact(stepName + ": " + e.Reason)
	return e
}
