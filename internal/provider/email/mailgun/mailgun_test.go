package mailgun

import (
	"bytes"
	"context"
	"mime"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/mailgun/mailgunfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

func sendTo(t *testing.T, f providertest.Fake, creds provider.Credentials, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	s, err := New(providertest.Config(f, creds, true))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

// fields decodes a recorded multipart body.
func fields(t *testing.T, d providertest.Delivery) map[string][]string {
	t.Helper()
	_, params, err := mime.ParseMediaType(d.Header.Get("Content-Type"))
	require.NoError(t, err)
	form, err := multipart.NewReader(bytes.NewReader(d.Body), params["boundary"]).ReadForm(1 << 20)
	require.NoError(t, err)
	return form.Value
}

func TestOverridesBecomeFormFields(t *testing.T) {
	t.Parallel()
	f := mailgunfake.New()
	defer f.Close()
	m := providertest.Canonical(provider.Email, 1)
	m.Headers = map[string]string{"X-Campaign": "spring"}
	m.Overrides = map[string]any{"o:tag": []any{"welcome", "onboarding"}, "o:tracking": false,
		"v:data": map[string]any{"plan": "pro"}, "subject": "Overridden"}
	_, err := sendTo(t, f, f.Credentials(), m)
	require.NoError(t, err)
	got := f.Received()
	require.Len(t, got, 1)
	v := fields(t, got[0])
	require.Equal(t, []string{"welcome", "onboarding"}, v["o:tag"])
	require.Equal(t, []string{"false"}, v["o:tracking"])
	require.Equal(t, []string{`{"plan":"pro"}`}, v["v:data"])
	require.Equal(t, []string{"Overridden"}, v["subject"], "an override replaces Herald's field")
	require.Equal(t, []string{"spring"}, v["h:X-Campaign"])
	require.Equal(t, []string{m.ID}, v["v:heraldMessageId"])
	require.Equal(t, []string{"reply@example.com"}, v["h:Reply-To"])
}

func TestBasicUserDefaultsToAPI(t *testing.T) {
	t.Parallel()
	f := mailgunfake.New()
	defer f.Close()
	creds := f.Credentials()
	delete(creds, "user")
	_, err := sendTo(t, f, creds, providertest.Canonical(provider.Email, 1))
	require.NoError(t, err)

	creds["user"] = "someone"
	_, err = sendTo(t, f, creds, providertest.Canonical(provider.Email, 2))
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, http.StatusUnauthorized, pe.Status)
	require.Equal(t, "Forbidden", pe.Reason)
}

func TestUnknownDomainIsPermanent(t *testing.T) {
	t.Parallel()
	f := mailgunfake.New()
	defer f.Close()
	creds := f.Credentials()
	creds["domain"] = "other.example.com"
	_, err := sendTo(t, f, creds, providertest.Canonical(provider.Email, 1))
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, http.StatusNotFound, pe.Status)
	require.Contains(t, pe.Reason, "Domain not found")
}
