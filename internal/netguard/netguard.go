// Package netguard keeps Herald's outbound connections (provider APIs,
// webhooks, SMTP) away from the networks they must not reach unless allowed:
// loopback, private, link-local, carrier-grade NAT, multicast and cloud
// metadata addresses. A host name is resolved once, every address checked,
// and the connection made to a checked address, so a name cannot resolve to
// a public address for the check and a private one for the connection.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// ErrRefused is wrapped by every refusal.
var ErrRefused = errors.New("refused by the private-network guard")

// Dialer dials through the guard.
type Dialer struct {
	// AllowPrivate lets connections reach every address (tests against
	// local servers, deployments that deliver to internal services).
	AllowPrivate bool
	// Resolve looks up a host's addresses (default: net.DefaultResolver).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to a checked address (default: a net.Dialer with a 10 s timeout).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// blocked are the ranges refused unless AllowPrivate.
var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "64:ff9b::/96", "100::/64",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Allowed reports whether a connection to ip may be made without AllowPrivate.
func Allowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// DialContext resolves addr's host, refuses it if any address is not
// allowed, and connects to the first allowed address that answers.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	dial := d.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		resolve := d.Resolve
		if resolve == nil {
			resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			}
		}
		if ips, err = resolve(ctx, host); err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("netguard: %s has no address", host)
		}
	}
	if !d.AllowPrivate {
		for _, ip := range ips {
			if !Allowed(ip) {
				return nil, fmt.Errorf("%w: %s resolves to %s, a loopback, private, link-local or metadata address"+
					" (HERALD_ALLOW_PRIVATE_NETWORKS=true allows it)", ErrRefused, host, ip.Unmap())
			}
		}
	}
	var firstErr error
	for _, ip := range ips {
		c, err := dial(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// Transport returns an HTTP transport that dials through d (HTTP/2 when
// the server offers it over TLS; proxies from the environment are not used,
// so the guard sees the real destination).
func (d *Dialer) Transport() *http.Transport {
	return &http.Transport{
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
}
