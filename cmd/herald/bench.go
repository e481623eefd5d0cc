package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/loadgen"
)

// benchCommand is the load generator (package loadgen): `herald bench`
// drives a running Herald over HTTP; `herald bench baseline` runs the same
// writes as raw SQL on an empty store of --data-dir or --database-url.
func benchCommand(open func(context.Context) (*app.App, error), stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "drive a running Herald over its HTTP API and print what it sustained (see docs/benchmarks.md)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "url", Local: true, Value: "http://127.0.0.1:3000", Usage: "the server's base URL"},
			&cli.StringFlag{Name: "api-key", Local: true, Usage: "an API key of the environment to load", Sources: cli.EnvVars("HERALD_API_KEY")},
			&cli.IntFlag{Name: "subscribers", Value: loadgen.DefaultSubscribers, Usage: "subscribers created for the run (the baseline's too)"},
			&cli.IntFlag{Name: "clients", Value: loadgen.DefaultClients, Usage: "concurrent clients, each sending one trigger at a time (the baseline's too)"},
			&cli.DurationFlag{Name: "duration", Value: loadgen.DefaultDuration, Usage: "length of the trigger phase (the baseline's too)"},
			&cli.IntFlag{Name: "probes", Local: true, Value: loadgen.DefaultProbes, Usage: "clients that time a trigger until its message is in the feed"},
			&cli.DurationFlag{Name: "poll-every", Local: true, Value: loadgen.DefaultPollEvery, Usage: "how often a probe reads the feed"},
			&cli.IntFlag{Name: "feed-clients", Local: true, Value: loadgen.DefaultFeedClients, Usage: "concurrent clients of the feed phase"},
			&cli.DurationFlag{Name: "feed-duration", Local: true, Value: loadgen.DefaultFeedDuration, Usage: "length of the feed phase"},
			&cli.DurationFlag{Name: "delivery-timeout", Local: true, Value: loadgen.DefaultDeliveryTimeout, Usage: "longest wait for the messages after the trigger phase"},
			&cli.IntFlag{Name: "pid", Local: true, Usage: "the server's process id: its memory (VmHWM, VmRSS) is reported"},
			&cli.BoolFlag{Name: "condition", Local: true, Usage: "give the workflow's step conditions that every trigger meets"},
			&cli.StringFlag{Name: "workflow", Local: true, Usage: "trigger this existing workflow (one in-app message a trigger, e.g. synced from a bridge) instead of the run's own"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.String("api-key") == "" {
				return errors.New("--api-key (or HERALD_API_KEY) is required")
			}
			r, err := loadgen.Run(ctx, loadgen.Config{URL: c.String("url"), APIKey: c.String("api-key"),
				Subscribers: c.Int("subscribers"), Clients: c.Int("clients"), Duration: c.Duration("duration"),
				Probes: c.Int("probes"), PollEvery: c.Duration("poll-every"), FeedClients: c.Int("feed-clients"),
				FeedDuration: c.Duration("feed-duration"), DeliveryTimeout: c.Duration("delivery-timeout"),
				PID: c.Int("pid"), Condition: c.Bool("condition"), Workflow: c.String("workflow"), Progress: stderr})
			if r != nil {
				if perr := r.Print(stdout); perr != nil {
					return perr
				}
			}
			if err != nil {
				return err
			}
			if n := r.Errors(); n > 0 {
				return fmt.Errorf("bench: %d wrong answers or messages", n)
			}
			return nil
		},
		Commands: []*cli.Command{{
			Name: "baseline",
			Usage: "run the SQL a trigger and its in-app delivery write, raw, on an empty store " +
				"(--data-dir for SQLite or --database-url), with --clients for --duration",
			Flags: []cli.Flag{&cli.IntFlag{Name: "group", Value: 1,
				Usage: "triggers a transaction: above 1, each transaction writes that many triggers with their in-app deliveries, as a trigger group does"}},
			Action: func(ctx context.Context, c *cli.Command) error {
				a, err := open(ctx)
				if err != nil {
					return err
				}
				defer a.Close()
				fmt.Fprintf(stderr, "baseline on %s for %s with %d clients\n", a.Store.Dialect(), c.Duration("duration"), c.Int("clients"))
				r, err := loadgen.Baseline(ctx, a, loadgen.BaselineConfig{Clients: c.Int("clients"), Duration: c.Duration("duration"),
					Subscribers: c.Int("subscribers"), Group: c.Int("group")})
				if r != nil {
					if perr := r.Print(stdout); perr != nil {
						return perr
					}
				}
				if err != nil {
					return err
				}
				if n := r.ErrorCount(); n > 0 {
					return fmt.Errorf("bench baseline: %d errors", n)
				}
				return nil
			},
		}},
	}
}
