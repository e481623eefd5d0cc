package webhooks_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/webhooks"
)

// TestSignKnownVector: the Standard Webhooks library's own test vector
// (standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts,
// "sign function works").
func TestSignKnownVector(t *testing.T) {
	t.Parallel()
	sig, err := webhooks.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
		[]byte(`{"test": 2432232314}`))
	require.NoError(t, err)
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", sig)
	// The same key without its prefix signs alike, as the libraries take it.
	bare, err := webhooks.Sign("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
		[]byte(`{"test": 2432232314}`))
	require.NoError(t, err)
	require.Equal(t, sig, bare)

	// During a rotation: one entry a secret, space-separated, the current first.
	other := webhooks.NewSecret()
	header, err := webhooks.SignatureHeader([]string{other, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "msg_p5jXN8AQM9LWM0D4loKWxJek",
		1614265330, []byte(`{"test": 2432232314}`))
	require.NoError(t, err)
	entries := strings.Split(header, " ")
	require.Len(t, entries, 2)
	require.Equal(t, sig, entries[1])
	require.NotEqual(t, sig, entries[0])
	_, err = webhooks.Sign("whsec_not base64!", "m", 1, nil)
	require.Error(t, err)
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 20 {
		s := webhooks.NewSecret()
		require.True(t, strings.HasPrefix(s, "whsec_"), s)
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		require.NoError(t, err, "standard base64")
		require.GreaterOrEqual(t, len(key), 24)
		require.LessOrEqual(t, len(key), 64)
		require.False(t, seen[s], "secrets are random")
		seen[s] = true
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		ok, private  bool
	}{
		{"https://hooks.example.com/herald?x=1", false, true, false},
		{"http://93.184.216.34:8080/h", false, true, false},
		{"https://[2606:4700::1111]/h", false, true, false},
		{"", false, false, false},
		{"hooks.example.com/h", false, false, false},
		{"ftp://hooks.example.com/h", false, false, false},
		{"https:///path-only", false, false, false},
		{"mailto:a@example.com", false, false, false},
		{"https://" + strings.Repeat("a", webhooks.MaxURL) + ".com", false, false, false},
		{"http://localhost:3000/h", false, false, true},
		{"http://LOCALHOST./h", false, false, true},
		{"http://api.localhost/h", false, false, true},
		{"http://127.0.0.1/h", false, false, true},
		{"http://10.1.2.3/h", false, false, true},
		{"http://192.168.0.10/h", false, false, true},
		{"http://172.16.5.4/h", false, false, true},
		{"http://169.254.169.254/latest/meta-data", false, false, true},
		{"http://100.64.0.1/h", false, false, true},
		{"http://0.0.0.0/h", false, false, true},
		{"http://[::1]:8080/h", false, false, true},
		{"http://[fe80::1]/h", false, false, true},
		{"http://[fd00::1]/h", false, false, true},
		{"http://[::ffff:127.0.0.1]/h", false, false, true},
		{"http://127.0.0.1:9/h", true, true, false},
		{"http://localhost/h", true, true, false},
	} {
		err := webhooks.CheckURL(tc.url, tc.allowPrivate)
		if tc.ok {
			require.NoError(t, err, tc.url)
			continue
		}
		require.Error(t, err, tc.url)
		require.Equal(t, tc.private, errors.Is(err, webhooks.ErrPrivateURL), "%s: %v", tc.url, err)
	}
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	d, err := webhooks.ParseSchedule("")
	require.NoError(t, err)
	require.Equal(t, webhooks.DefaultSchedule, d)
	d, err = webhooks.ParseSchedule(webhooks.DefaultScheduleText)
	require.NoError(t, err)
	require.Equal(t, webhooks.DefaultSchedule, d)
	d, err = webhooks.ParseSchedule(" 0s, 250ms ,1m")
	require.NoError(t, err)
	require.Equal(t, []time.Duration{0, 250 * time.Millisecond, time.Minute}, d)
	for _, bad := range []string{"5", "0s,-1s", "0s,,1s", "soon", strings.Repeat("1s,", 100) + "1s"} {
		_, err := webhooks.ParseSchedule(bad)
		require.Error(t, err, bad)
	}
}

func TestValidType(t *testing.T) {
	t.Parallel()
	require.Len(t, webhooks.Types, 16)
	for _, typ := range webhooks.Types {
		require.True(t, webhooks.ValidType(typ))
	}
	for _, bad := range []string{"", "message", "message.*", "Message.Sent", "subscriber.created"} {
		require.False(t, webhooks.ValidType(bad), bad)
	}
}
