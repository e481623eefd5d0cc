package providertest

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/provider"
)

// Config builds the provider configuration a test or benchmark uses
// against a fake: its credentials, a client trusting its CA, and the
// network guard allowing loopback (or not).
func Config(f Fake, creds provider.Credentials, allowPrivate bool) provider.Config {
	d := &netguard.Dialer{AllowPrivate: allowPrivate}
	tr := d.Transport()
	tlsConf := &tls.Config{RootCAs: f.Roots(), MinVersion: tls.VersionTLS12}
	tr.TLSClientConfig = tlsConf
	return provider.Config{Credentials: creds, HTTP: &http.Client{Transport: tr}, Dial: d.DialContext, TLS: tlsConf,
		Now: time.Now}
}

// Canonical is the message the suite sends on a channel.
func Canonical(ch provider.Channel, n int) *provider.Message {
	m := &provider.Message{ID: fmt.Sprintf("msg%021d", n), IdempotencyKey: fmt.Sprintf("herald-job-%d", n)}
	switch ch {
	case provider.Email:
		m.To, m.Cc, m.Bcc = []string{"ada@example.com"}, []string{"cc@example.com"}, []string{"bcc@example.com"}
		m.ReplyTo, m.Subject = "reply@example.com", fmt.Sprintf("Welcome #%d, Ada", n)
		m.HTML, m.Text = "<p>Hello <b>Ada</b> ✓</p>", "Hello Ada ✓"
	case provider.SMS:
		m.To, m.Content = []string{"+15555550100"}, fmt.Sprintf("Your code is %d ✓", n)
	case provider.Chat:
		m.Content = fmt.Sprintf("Build #%d passed ✓", n)
	case provider.Push:
		m.Subject, m.Content = "New comment", fmt.Sprintf("Ada replied #%d ✓", n)
		m.Data = map[string]any{"postId": "42"}
	}
	m.Payload = map[string]any{"n": n}
	m.Subscriber = map[string]any{"subscriberId": "ada"}
	m.Step = map[string]any{"stepId": "step"}
	return m
}

// Run is the suite every provider passes against its fake.
func Run(t *testing.T, e provider.Entry, newFake func(t *testing.T) Fake) {
	t.Helper()
	send := func(t *testing.T, f Fake, creds provider.Credentials, allowPrivate bool, m *provider.Message, timeout time.Duration) (*provider.Result, error) {
		t.Helper()
		s, err := e.Sender(Config(f, creds, allowPrivate))
		require.NoError(t, err)
		if c, ok := s.(provider.Closer); ok {
			t.Cleanup(func() { _ = c.Close() })
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return s.Send(ctx, m)
	}
	message := func(f Fake, n int) *provider.Message {
		m := Canonical(e.Channel, n)
		f.Address(m)
		return m
	}
	noSecrets := func(t *testing.T, creds provider.Credentials, texts ...string) {
		t.Helper()
		for _, s := range e.Secrets(creds) {
			for _, txt := range texts {
				require.NotContains(t, txt, s, "a credential leaked into what Herald keeps")
			}
		}
	}
	classOf := func(t *testing.T, err error) *provider.Error {
		t.Helper()
		require.Error(t, err)
		var pe *provider.Error
		require.True(t, errors.As(err, &pe), "a provider failure is a *provider.Error, got %T %v", err, err)
		return pe
	}

	t.Run("schema", func(t *testing.T) {
		f := newFake(t)
		defer f.Close()
		creds := f.Credentials()
		require.Empty(t, e.Missing(creds), "the fake's credentials satisfy the schema")
		documented := map[string]bool{}
		for _, k := range e.Credentials {
			documented[k.Key] = true
		}
		for k := range creds {
			require.True(t, documented[k], "the fake's credential %s is one the entry documents", k)
		}
		for _, k := range e.Required() {
			c := provider.Credentials{}
			for kk, v := range creds {
				if kk != k {
					c[kk] = v
				}
			}
			require.Equal(t, []string{k}, e.Missing(c), "without %s", k)
		}
		info, ok := provider.Lookup(e.ID)
		require.True(t, ok)
		require.Equal(t, info.Channel, e.Channel)
	})

	t.Run("delivers", func(t *testing.T) {
		f := newFake(t)
		defer f.Close()
		m := message(f, 1)
		res, err := send(t, f, f.Credentials(), true, m, 10*time.Second)
		require.NoError(t, err)
		got := f.Received()
		require.Len(t, got, 1)
		d := got[0]
		require.NotEmpty(t, res.ProviderMessageID, "the provider's message id is read from its answer")
		require.Equal(t, d.MessageID, res.ProviderMessageID)
		noSecrets(t, f.Credentials(), res.Raw)
		switch e.Channel {
		case provider.Email:
			require.Equal(t, m.To, d.To)
			require.Equal(t, m.Cc, d.Cc)
			require.Equal(t, m.Bcc, d.Bcc)
			require.Equal(t, f.Credentials().String("from"), d.From)
			require.Equal(t, f.Credentials().String("senderName"), d.SenderName)
			require.Equal(t, m.ReplyTo, d.ReplyTo)
			require.Equal(t, m.Subject, d.Subject)
			require.Equal(t, m.HTML, d.HTML)
			require.Equal(t, m.Text, d.Text)
		case provider.SMS:
			require.Equal(t, m.To, d.To)
			require.Equal(t, m.Content, d.Content)
			if from := f.Credentials().String("from"); from != "" {
				require.Equal(t, from, d.From)
			}
		case provider.Chat:
			require.Equal(t, m.Content, d.Content)
		case provider.Push:
			require.Equal(t, m.Tokens, d.Tokens)
			require.Equal(t, m.Subject, d.Subject)
			require.Equal(t, m.Content, d.Content)
			require.Equal(t, "42", fmt.Sprint(d.Data["postId"]))
		}
		if f.Traits().Idempotency {
			require.Equal(t, m.IdempotencyKey, d.IdempotencyKey)
		}
	})

	t.Run("from and sender name of the message win", func(t *testing.T) {
		if e.Channel != provider.Email {
			t.Skip("e-mail only")
		}
		f := newFake(t)
		defer f.Close()
		m := message(f, 2)
		m.From, m.SenderName = "override@example.com", "Överride Team"
		_, err := send(t, f, f.Credentials(), true, m, 10*time.Second)
		require.NoError(t, err)
		got := f.Received()
		require.Len(t, got, 1)
		require.Equal(t, "override@example.com", got[0].From)
		require.Equal(t, "Överride Team", got[0].SenderName)
	})

	t.Run("overrides merged into the request", func(t *testing.T) {
		if !f0(newFake, t).Overrides {
			t.Skip("no JSON body")
		}
		f := newFake(t)
		defer f.Close()
		m := message(f, 3)
		m.Overrides = map[string]any{"heraldOverride": "from-the-trigger"}
		_, err := send(t, f, f.Credentials(), true, m, 10*time.Second)
		require.NoError(t, err)
		got := f.Received()
		require.Len(t, got, 1)
		require.True(t, bytes.Contains(got[0].Body, []byte(`"heraldOverride":"from-the-trigger"`)), string(got[0].Body))
	})

	t.Run("bad credentials are permanent", func(t *testing.T) {
		f := newFake(t)
		defer f.Close()
		bad := f.BadCredentials()
		if bad == nil {
			t.Skip("the provider takes no credentials")
		}
		_, err := send(t, f, bad, true, message(f, 4), 10*time.Second)
		pe := classOf(t, err)
		require.Equal(t, provider.Permanent, pe.Class, pe.Error())
		require.Empty(t, f.Received())
		require.LessOrEqual(t, f.Requests(), 1, "one request, no retry inside the sender")
		noSecrets(t, bad, pe.Error(), pe.Raw)
	})

	for _, tc := range []struct {
		name    string
		failure Failure
		class   provider.Class
	}{
		{"rejected is permanent", Rejected, provider.Permanent},
		{"unavailable is transient", Unavailable, provider.Transient},
		{"rate limited is transient", RateLimited, provider.Transient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			defer f.Close()
			f.Fail(tc.failure, 1)
			_, err := send(t, f, f.Credentials(), true, message(f, 5), 10*time.Second)
			pe := classOf(t, err)
			require.Equal(t, tc.class, pe.Class, pe.Error())
			require.Equal(t, 1, f.Requests(), "one request, no retry inside the sender")
			require.Empty(t, f.Received())
			require.NotEmpty(t, pe.Reason)
			noSecrets(t, f.Credentials(), pe.Error(), pe.Raw)
			if tc.failure == RateLimited && f.Traits().RetryAfter {
				require.Equal(t, 7*time.Second, pe.RetryAfter)
			}
			// The next call goes through.
			_, err = send(t, f, f.Credentials(), true, message(f, 6), 10*time.Second)
			require.NoError(t, err)
			require.Len(t, f.Received(), 1)
		})
	}

	t.Run("a provider that does not answer times out, transient", func(t *testing.T) {
		f := newFake(t)
		defer f.Close()
		f.Fail(Hang, 1)
		start := time.Now()
		_, err := send(t, f, f.Credentials(), true, message(f, 7), 300*time.Millisecond)
		pe := classOf(t, err)
		require.Equal(t, provider.Transient, pe.Class, pe.Error())
		require.Less(t, time.Since(start), 5*time.Second)
	})

	t.Run("invalid device token", func(t *testing.T) {
		if e.Channel != provider.Push {
			t.Skip("push only")
		}
		f := newFake(t)
		defer f.Close()
		f.Fail(InvalidToken, 1)
		m := message(f, 8)
		_, err := send(t, f, f.Credentials(), true, m, 10*time.Second)
		pe := classOf(t, err)
		if pe.Class != provider.TokenInvalid {
			t.Skipf("the provider does not report invalid tokens (%v)", pe)
		}
		require.Equal(t, m.Tokens, pe.InvalidTokens)
	})

	t.Run("private networks refused before any connection", func(t *testing.T) {
		f := newFake(t)
		defer f.Close()
		_, err := send(t, f, f.Credentials(), false, message(f, 9), 10*time.Second)
		pe := classOf(t, err)
		require.Equal(t, provider.Permanent, pe.Class, pe.Error())
		require.True(t, errors.Is(err, netguard.ErrRefused) || strings.Contains(pe.Error(), "private-network guard"), pe.Error())
		require.Zero(t, f.Requests(), "nothing reached the fake")
	})

	t.Run("concurrent sends", func(t *testing.T) {
		f := newFake(t)
		defer f.Close()
		s, err := e.Sender(Config(f, f.Credentials(), true))
		require.NoError(t, err)
		if c, ok := s.(provider.Closer); ok {
			defer c.Close()
		}
		var wg sync.WaitGroup
		errs := make([]error, 20)
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, errs[i] = s.Send(ctx, message(f, 100+i))
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		got := f.Received()
		require.Len(t, got, 20)
		ids := map[string]bool{}
		for _, d := range got {
			ids[d.MessageID] = true
		}
		require.Len(t, ids, 20, "distinct provider message ids")
	})
}

func f0(newFake func(t *testing.T) Fake, t *testing.T) Traits {
	f := newFake(t)
	defer f.Close()
	return f.Traits()
}

// Contains reports whether list holds s (for fakes checking recipients).
func Contains(list []string, s string) bool { return slices.Contains(list, s) }
