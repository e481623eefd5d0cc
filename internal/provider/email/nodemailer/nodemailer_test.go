package nodemailer

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/nodemailer/nodemailerfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// newSender builds a sender against f with creds (f's when nil).
func newSender(t testing.TB, f *nodemailerfake.Fake, creds provider.Credentials) *sender {
	t.Helper()
	if creds == nil {
		creds = f.Credentials()
	}
	s, err := New(providertest.Config(f, creds, true))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.(provider.Closer).Close() })
	return s.(*sender)
}

func send(t testing.TB, s provider.Sender, n int) (*provider.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, providertest.Canonical(provider.Email, n))
}

// eventually polls cond until it holds or a deadline passes.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPoolReusesConnections(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.New()
	defer f.Close()
	s := newSender(t, f, nil)
	for i := range 50 {
		_, err := send(t, s, i)
		require.NoError(t, err)
	}
	require.Len(t, f.Received(), 50)
	require.Equal(t, 1, f.Connections(), "one connection carries consecutive sends")

	var wg sync.WaitGroup
	errs := make(chan error, 160)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				_, err := send(t, s, 1000+g*10+i)
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, f.Received(), 210)
	require.LessOrEqual(t, f.Connections(), defaultConns, "the pool bounds the open connections")
	require.LessOrEqual(t, s.pool.idleCount(), defaultConns)
}

// TestPoolSizedByConcurrency: the integration's concurrency is the most
// connections its sender opens.
func TestPoolSizedByConcurrency(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.New()
	defer f.Close()
	f.SetDelay(20 * time.Millisecond)
	cfg := providertest.Config(f, f.Credentials(), true)
	cfg.Concurrency = 3
	ps, err := New(cfg)
	require.NoError(t, err)
	defer ps.(provider.Closer).Close()
	var wg sync.WaitGroup
	for g := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := send(t, ps, 2000+g)
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	require.Len(t, f.Received(), 12)
	require.LessOrEqual(t, f.Connections(), 3, "no more connections than the integration's concurrency")
	require.GreaterOrEqual(t, f.Connections(), 2, "sends in flight use several connections")
}

func TestConnectionRetiredAfterMaxMessages(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.New()
	defer f.Close()
	s := newSender(t, f, nil)
	for i := range maxMessages + 1 {
		_, err := send(t, s, i)
		require.NoError(t, err)
	}
	require.Equal(t, 2, f.Connections())
}

func TestIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.New()
	defer f.Close()
	s := newSender(t, f, nil)
	s.pool.idle = 50 * time.Millisecond
	_, err := send(t, s, 1)
	require.NoError(t, err)
	eventually(t, func() bool { return s.pool.idleCount() == 0 }, "the idle connection to be closed")
	_, err = send(t, s, 2)
	require.NoError(t, err)
	require.Equal(t, 2, f.Connections())
}

func TestConnectionDroppedByTheServerIsNotUsed(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.NewWith(nodemailerfake.Options{IdleTimeout: 100 * time.Millisecond})
	defer f.Close()
	s := newSender(t, f, nil)
	_, err := send(t, s, 1)
	require.NoError(t, err)
	s.pool.mu.Lock()
	cn := s.pool.conns[0]
	s.pool.mu.Unlock()
	eventually(t, func() bool { return !alive(cn.raw) }, "the server to drop the idle client")
	_, err = send(t, s, 2)
	require.NoError(t, err)
	require.Equal(t, 2, f.Requests(), "no transaction was wasted on the dead connection")
	require.Equal(t, 2, f.Connections())
	require.Len(t, f.Received(), 2)
}

func TestRequireTLSRefusesAServerWithoutSTARTTLS(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.NewWith(nodemailerfake.Options{NoTLS: true})
	defer f.Close()
	creds := f.Credentials()
	creds["requireTls"] = true
	_, err := send(t, newSender(t, f, creds), 1)
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class, pe.Error())
	require.Contains(t, pe.Error(), "STARTTLS")
	require.Zero(t, f.Requests(), "no MAIL transaction")
	require.Empty(t, f.Received())

	// Without requireTls the same server gets the message in plain text.
	_, err = send(t, newSender(t, f, nil), 2)
	require.NoError(t, err)
	require.Len(t, f.Received(), 1)
}

func TestSTARTTLSIsUsedWhenOffered(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.New()
	defer f.Close()
	creds := f.Credentials()
	creds["requireTls"] = "true"
	_, err := send(t, newSender(t, f, creds), 1)
	require.NoError(t, err)
	require.Len(t, f.Received(), 1)

	// ignoreTls never upgrades; this server then refuses AUTH in the clear.
	creds = f.Credentials()
	creds["ignoreTls"] = true
	_, err = send(t, newSender(t, f, creds), 2)
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class, pe.Error())
	require.Len(t, f.Received(), 1)
}

func TestImplicitTLS(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.NewWith(nodemailerfake.Options{ImplicitTLS: true})
	defer f.Close()
	require.Equal(t, true, f.Credentials()["secure"])
	res, err := send(t, newSender(t, f, nil), 1)
	require.NoError(t, err)
	got := f.Received()
	require.Len(t, got, 1)
	require.Equal(t, got[0].MessageID, res.ProviderMessageID)
}

func TestAuthLogin(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.NewWith(nodemailerfake.Options{LoginOnly: true})
	defer f.Close()
	_, err := send(t, newSender(t, f, nil), 1)
	require.NoError(t, err)
	require.Len(t, f.Received(), 1)

	_, err = send(t, newSender(t, f, f.BadCredentials()), 2)
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, 535, pe.Status)
	require.NotContains(t, pe.Error()+pe.Raw, "wrong-smtp-password-99")
}

func TestRejectUnauthorizedFalseSkipsVerification(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.New()
	defer f.Close()
	cfg := providertest.Config(f, f.Credentials(), true)
	cfg.TLS = &tls.Config{} // the system's roots: the fake's certificate does not verify
	s, err := New(cfg)
	require.NoError(t, err)
	defer s.(provider.Closer).Close()
	_, err = send(t, s, 1)
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class, pe.Error())
	require.Empty(t, f.Received())

	for _, opts := range []any{map[string]any{"rejectUnauthorized": false}, `{"rejectUnauthorized": false}`} {
		cfg.Credentials = f.Credentials()
		cfg.Credentials["tlsOptions"] = opts
		s, err := New(cfg)
		require.NoError(t, err)
		_, err = send(t, s, 2)
		require.NoError(t, err)
		_ = s.(provider.Closer).Close()
	}
	require.Len(t, f.Received(), 2)
}

func TestCredentialsChecked(t *testing.T) {
	t.Parallel()
	for _, c := range []provider.Credentials{
		{"host": "smtp.example.com", "port": "smtp"},
		{"host": "smtp.example.com", "port": "25", "requireTls": true, "ignoreTls": true},
		{"host": "smtp.example.com", "port": "25", "tlsOptions": "{not json"},
	} {
		_, err := New(provider.Config{Credentials: c})
		require.Error(t, err, "%v", c)
	}
}

func TestMIMEMessage(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.New()
	defer f.Close()
	s := newSender(t, f, nil)
	m := &provider.Message{ID: "abc123", To: []string{"Ada Lovelace <ada@example.com>"},
		SenderName: "Zoë, \"the\" Sender", Subject: "Grüße — " + strings.Repeat("ünïcode ", 12), HTML: "<p>Ünïcode</p>",
		Headers: map[string]string{"X-Campaign": "spring", "X-Evil": "a\r\nBcc: spy@example.com", "Bcc": "spy@example.com"}}
	res, err := s.Send(context.Background(), m)
	require.NoError(t, err)
	require.Equal(t, "<abc123@herald.test>", res.ProviderMessageID)
	got := f.Received()
	require.Len(t, got, 1)
	d := got[0]
	require.Equal(t, []string{"ada@example.com"}, d.To)
	require.Empty(t, d.Bcc, "no header injection added a recipient")
	require.Equal(t, m.SenderName, d.SenderName)
	require.Equal(t, m.Subject, d.Subject)
	require.Equal(t, m.HTML, d.HTML)
	require.Empty(t, d.Text)
	require.Equal(t, "spring", d.Header.Get("X-Campaign"))
	require.Equal(t, "a Bcc: spy@example.com", d.Header.Get("X-Evil"))
	raw := string(d.Body)
	require.Contains(t, raw, "Subject: =?UTF-8?q?")
	require.NotContains(t, raw, "\nBcc:")
	for _, line := range strings.Split(raw, "\r\n") {
		require.LessOrEqual(t, len(line), 998, "RFC 5322 line length")
	}

	_, err = s.Send(context.Background(), &provider.Message{To: []string{"not an address"}, Text: "x"})
	require.Equal(t, provider.Permanent, provider.AsError(err).Class)
	_, err = s.Send(context.Background(), &provider.Message{To: []string{"a@example.com"}, Text: "x",
		Headers: map[string]string{"Bad Name": "x"}})
	require.Equal(t, provider.Permanent, provider.AsError(err).Class)
}

func TestCancelledContextUnblocksASend(t *testing.T) {
	t.Parallel()
	f := nodemailerfake.New()
	defer f.Close()
	s := newSender(t, f, nil)
	f.Fail(providertest.Hang, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Send(ctx, providertest.Canonical(provider.Email, 1))
		done <- err
	}()
	eventually(t, func() bool { return f.Requests() == 1 }, "the MAIL command")
	cancel()
	select {
	case err := <-done:
		require.Equal(t, provider.Transient, provider.AsError(err).Class)
	case <-time.After(5 * time.Second):
		t.Fatal("the send ignored its cancelled context")
	}
	require.Zero(t, s.pool.idleCount(), "the interrupted connection is not reused")
	_, err := send(t, s, 2)
	require.NoError(t, err)
}

// BenchmarkSend measures pooled sends to the local fake (e-mails/s).
func BenchmarkSend(b *testing.B) {
	f := nodemailerfake.New()
	defer f.Close()
	s := newSender(b, f, nil)
	b.SetParallelism(4)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if _, err := send(b, s, i); err != nil {
				panic(fmt.Sprint(err))
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "e-mails/s")
}
