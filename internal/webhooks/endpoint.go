package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/netguard"
)

// SecretPrefix starts every endpoint secret; the rest is standard base64 of
// secretBytes random bytes.
const SecretPrefix = "whsec_"

// secretBytes is the length of a new secret's key (the contract allows 24
// to 64).
const secretBytes = 32

// MaskedSecret stands for a secret in listings: the list never shows one.
const MaskedSecret = "whsec_••••••••"

// MaxURL and MaxDescription bound an endpoint's fields.
const (
	MaxURL         = 2048
	MaxDescription = 1024
)

// NewSecret makes an endpoint secret.
func NewSecret() string {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ErrPrivateURL is wrapped by CheckURL's refusal of a loopback, private or
// link-local host.
var ErrPrivateURL = errors.New("private network address")

// CheckURL reports why raw is not an endpoint URL: an absolute http(s) URL
// with a host, at most MaxURL long; unless allowPrivate, its host is neither
// localhost nor an IP literal of a loopback, private, link-local,
// unspecified or shared range (a name resolving to one is refused when an
// attempt connects, by the network guard).
func CheckURL(raw string, allowPrivate bool) error {
	if raw == "" {
		return errors.New("url is required")
	}
	if len(raw) > MaxURL {
		return fmt.Errorf("url must be at most %d characters", MaxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		return errors.New("url must be an absolute http or https URL")
	}
	if allowPrivate {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Errorf("%w: url must not point to localhost (HERALD_ALLOW_PRIVATE_NETWORKS=true allows it)", ErrPrivateURL)
	}
	if ip, err := netip.ParseAddr(host); err == nil && !netguard.Allowed(ip) {
		return fmt.Errorf("%w: url must not point to a loopback, private or link-local address"+
			" (HERALD_ALLOW_PRIVATE_NETWORKS=true allows it)", ErrPrivateURL)
	}
	return nil
}

// DefaultSchedule is the delay of each attempt: the first after the event,
// each next one after the previous failed.
var DefaultSchedule = []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 10 * time.Hour}

// DefaultScheduleText is DefaultSchedule as --webhook-retry-schedule takes it.
const DefaultScheduleText = "0s,5s,5m,30m,2h,5h,10h,10h"

// maxAttempts bounds a schedule's length.
const maxAttempts = 100

// ParseSchedule reads a retry schedule: comma-separated Go durations, none
// negative, one to maxAttempts of them ("" is the default).
func ParseSchedule(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return append([]time.Duration(nil), DefaultSchedule...), nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxAttempts {
		return nil, fmt.Errorf("webhook retry schedule: at most %d attempts, not %d", maxAttempts, len(parts))
	}
	out := make([]time.Duration, 0, len(parts))
	for _, p := range parts {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("webhook retry schedule: %q is not a duration such as 0s, 5s, 5m or 2h", strings.TrimSpace(p))
		}
		out = append(out, d)
	}
	return out, nil
}
