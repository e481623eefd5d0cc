package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOrigins(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
		bad  bool
	}{
		{name: "default", in: "", want: []string{"*"}},
		{name: "star", in: "*", want: []string{"*"}},
		{name: "list", in: "https://app.example.com, http://localhost:5173/", want: []string{"https://app.example.com", "http://localhost:5173"}},
		{name: "blank items", in: " , https://a.test ,", want: []string{"https://a.test"}},
		{name: "path", in: "https://app.example.com/inbox", bad: true},
		{name: "no scheme", in: "app.example.com", bad: true},
		{name: "other scheme", in: "ftp://app.example.com", bad: true},
		{name: "query", in: "https://app.example.com?x=1", bad: true},
		{name: "user", in: "https://u@app.example.com", bad: true},
		{name: "one bad of two", in: "https://ok.test,nope", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{CORSOrigins: tc.in}
			got, err := c.Origins()
			if tc.bad {
				require.Error(t, err)
				require.Error(t, c.Validate(), "Herald refuses to start with it")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.NoError(t, c.Validate())
		})
	}
	require.Error(t, Config{InboxSessionTTL: -time.Second}.Validate())
}

func TestMetricsToken(t *testing.T) {
	t.Parallel()
	require.NoError(t, Config{}.Validate(), "no token: /metrics is open")
	require.NoError(t, Config{MetricsToken: "s3cr3t-Token_~"}.Validate())
	for _, bad := range []string{"two words", "tab\there", "nul\x00", "é"} {
		require.Error(t, Config{MetricsToken: bad}.Validate(), "%q", bad)
	}
}
