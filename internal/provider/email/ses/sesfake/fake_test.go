package sesfake

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestATamperedBodyDoesNotVerify: the fake refuses a body other than the one signed.
func TestATamperedBodyDoesNotVerify(t *testing.T) {
	t.Parallel()
	f := New()
	defer f.Close()
	key := f.key
	u, err := url.Parse(f.URL() + "/v2/email/outbound-emails")
	require.NoError(t, err)
	body := []byte(`{"FromEmailAddress":"a@herald.test","Destination":{"ToAddresses":["b@example.com"]},"Content":{"Simple":{"Subject":{"Data":"s"},"Body":{"Text":{"Data":"t"}}}}}`)
	post := func(sent []byte) *http.Response {
		req, err := http.NewRequest(http.MethodPost, u.String(), bytes.NewReader(sent))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		key.Sign(http.MethodPost, u, req.Header, body, time.Now())
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	require.Equal(t, http.StatusOK, post(body).StatusCode)
	resp := post(bytes.Replace(body, []byte("b@example"), []byte("x@example"), 1))
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "SignatureDoesNotMatch", resp.Header.Get("X-Amzn-ErrorType")[:len("SignatureDoesNotMatch")])
	require.Len(t, f.Received(), 1)
}
