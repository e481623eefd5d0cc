package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", false}, {"127.1.2.3", false}, {"10.0.0.1", false}, {"172.16.0.1", false}, {"172.31.255.255", false},
		{"192.168.1.1", false}, {"169.254.169.254", false}, {"100.64.0.1", false}, {"0.0.0.0", false},
		{"224.0.0.1", false}, {"255.255.255.255", false}, {"::1", false}, {"::", false}, {"fe80::1", false},
		{"fc00::1", false}, {"fd00:ec2::254", false}, {"::ffff:127.0.0.1", false}, {"::ffff:10.1.1.1", false},
		{"64:ff9b::a00:1", false},
		{"93.184.216.34", true}, {"8.8.8.8", true}, {"172.32.0.1", true}, {"2606:4700::1111", true}, {"::ffff:8.8.8.8", true},
	} {
		require.Equal(t, tc.want, Allowed(netip.MustParseAddr(tc.ip)), tc.ip)
	}
}

// dialer returns a guard whose resolver answers addrs and whose dial hook
// records the address it was asked for and connects nowhere.
func dialer(allow bool, addrs ...string) (*Dialer, *[]string, *atomic.Int32) {
	var dialed []string
	var lookups atomic.Int32
	d := &Dialer{
		AllowPrivate: allow,
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			lookups.Add(1)
			var out []netip.Addr
			for _, a := range addrs {
				out = append(out, netip.MustParseAddr(a))
			}
			return out, nil
		},
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			dialed = append(dialed, addr)
			return nil, errors.New("test dialer: no connection made")
		},
	}
	return d, &dialed, &lookups
}

func TestRefusedBeforeAnyConnection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		addr  string
		addrs []string
	}{
		{"a name resolving to a private address", "internal.example:443", []string{"10.0.0.5"}},
		{"a name resolving to the metadata service", "metadata.example:80", []string{"169.254.169.254"}},
		{"one private address among public ones", "mixed.example:443", []string{"93.184.216.34", "192.168.0.10"}},
		{"a name resolving to loopback v6", "six.example:443", []string{"::1"}},
		{"a loopback literal", "127.0.0.1:25", nil},
		{"a mapped private literal", "[::ffff:10.0.0.1]:443", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, dialed, _ := dialer(false, tc.addrs...)
			_, err := d.DialContext(context.Background(), "tcp", tc.addr)
			require.ErrorIs(t, err, ErrRefused)
			require.Empty(t, *dialed, "nothing was dialed")
		})
	}
}

func TestConnectsToTheCheckedAddress(t *testing.T) {
	t.Parallel()
	// The name is resolved once and the connection asked for the address
	// that was checked: a second lookup (DNS rebinding) cannot change it.
	d, dialed, lookups := dialer(false, "93.184.216.34")
	_, err := d.DialContext(context.Background(), "tcp", "provider.example:443")
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrRefused)
	require.Equal(t, []string{"93.184.216.34:443"}, *dialed)
	require.EqualValues(t, 1, lookups.Load())

	allowed, dialed2, _ := dialer(true, "10.0.0.5")
	_, _ = allowed.DialContext(context.Background(), "tcp", "internal.example:8080")
	require.Equal(t, []string{"10.0.0.5:8080"}, *dialed2, "allowed when private networks are")
}

func TestTransportRefusesLoopback(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()

	guarded := &http.Client{Transport: (&Dialer{}).Transport()}
	_, err := guarded.Get(srv.URL)
	require.ErrorIs(t, err, ErrRefused)
	require.Zero(t, hits.Load())

	open := &http.Client{Transport: (&Dialer{AllowPrivate: true}).Transport()}
	res, err := open.Get(srv.URL)
	require.NoError(t, err)
	res.Body.Close()
	require.EqualValues(t, 1, hits.Load())
}
