package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/urfave/cli/v3"
)

// healthcheckTimeout bounds one `herald healthcheck`: a server that has not
// answered by then is unhealthy.
var healthcheckTimeout = 5 * time.Second

// healthcheckCommand is the probe of container health checks (Dockerfile,
// deploy/compose.yaml), where no curl is at hand: it GETs /health and exits 0
// on a 200, 1 otherwise.
func healthcheckCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "healthcheck",
		Usage: "GET the server's /health: exit 0 on a 200, 1 otherwise (another status, nothing listening, no answer within 5 s)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "url", Usage: "the URL to check (default: http://127.0.0.1:PORT/health, PORT from HERALD_ADDR, else 3000)"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			url := c.String("url")
			if url == "" {
				var err error
				if url, err = defaultHealthURL(os.Getenv("HERALD_ADDR")); err != nil {
					return err
				}
			}
			if err := healthcheck(ctx, url, healthcheckTimeout); err != nil {
				return err
			}
			fmt.Fprintln(stdout, "healthy:", url)
			return nil
		},
	}
}

// defaultHealthURL is /health on the address `herald serve` listens on
// (addr as HERALD_ADDR gives it): an unspecified host (empty, 0.0.0.0, ::)
// is reached on 127.0.0.1, and no address at all means port 3000.
func defaultHealthURL(addr string) (string, error) {
	host, port := "", "3000"
	if addr != "" {
		var err error
		if host, port, err = net.SplitHostPort(addr); err != nil {
			return "", fmt.Errorf("HERALD_ADDR %q: %w", addr, err)
		}
		if port == "" {
			port = "3000"
		}
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/health", nil
}

// healthcheck GETs url and returns nil only for a 200 answered within
// timeout. Redirects are not followed and no proxy is used: the check is of
// this server, as addressed.
func healthcheck(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	client := &http.Client{
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	res, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("health check: no answer from %s within %s", url, timeout)
		}
		return fmt.Errorf("health check: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("health check: %s answered %s", url, res.Status)
	}
	return nil
}
