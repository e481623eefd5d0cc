package sigv4

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The examples of AWS's SigV4 test suite (aws-sig-v4-test-suite): service
// "service", region us-east-1, 2015-08-30T12:36:00Z, the documented example
// key pair, and the signatures AWS publishes for them.
func TestSigV4TestSuite(t *testing.T) {
	t.Parallel()
	key := Key{ID: "AKIDEXAMPLE", Secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", Region: "us-east-1", Service: "service"}
	now := time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, method, url, contentType, body, signed, signature string
	}{
		{"get-vanilla", "GET", "https://example.amazonaws.com/", "", "", "host;x-amz-date",
			"5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
		{"post-vanilla", "POST", "https://example.amazonaws.com/", "", "", "host;x-amz-date",
			"5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
		{"get-vanilla-query-order-key-case", "GET", "https://example.amazonaws.com/?Param2=value2&Param1=value1", "", "",
			"host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
		{"get-utf8", "GET", "https://example.amazonaws.com/%E1%88%B4", "", "", "host;x-amz-date",
			"8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"},
		{"post-x-www-form-urlencoded", "POST", "https://example.amazonaws.com/", "application/x-www-form-urlencoded",
			"Param1=value1", "content-type;host;x-amz-date",
			"ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(tc.url)
			require.NoError(t, err)
			h := http.Header{}
			if tc.contentType != "" {
				h.Set("Content-Type", tc.contentType)
			}
			key.Sign(tc.method, u, h, []byte(tc.body), now)
			require.Equal(t, "20150830T123600Z", h.Get("X-Amz-Date"))
			require.Equal(t, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders="+
				tc.signed+", Signature="+tc.signature, h.Get("Authorization"))
		})
	}
}

// The canonical request of get-vanilla, as the suite documents it.
func TestCanonicalRequest(t *testing.T) {
	t.Parallel()
	values := func(name string) []string {
		return map[string][]string{"host": {"example.amazonaws.com"}, "x-amz-date": {"20150830T123600Z"},
			"my-header1": {"  value1  ", "a   b   c"}}[name]
	}
	require.Equal(t, "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"+
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		CanonicalRequest("GET", "/", nil, []string{"host", "x-amz-date"}, values, HashHex(nil)))
	require.Contains(t, CanonicalRequest("GET", "/", nil, []string{"my-header1"}, values, ""), "my-header1:value1,a b c\n")
}
