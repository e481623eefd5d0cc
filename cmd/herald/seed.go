package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/seed"
	"github.com/herald-notify/herald/internal/store"
)

// seedCommand bulk-loads generated subscribers (package seed) for benchmarks.
func seedCommand(open func(context.Context) (*app.App, error), envFlag cli.Flag, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "seed",
		Usage: "bulk-load generated subscribers (for benchmarks and demos)",
		Flags: []cli.Flag{
			envFlag,
			&cli.IntFlag{Name: "subscribers", Usage: "how many subscribers to load", Required: true},
			&cli.IntFlag{Name: "from", Usage: "number of the first subscriber (to add to an earlier seed)"},
			&cli.IntFlag{Name: "batch", Value: 5000, Usage: "subscribers per insert"},
			&cli.IntFlag{Name: "workers", Value: 2, Usage: "batches generated and inserted at once"},
			&cli.Uint64Flag{Name: "seed", Value: seed.DefaultSeed, Usage: "generator seed (the benchmarks assume the default)"},
			&cli.IntFlag{Name: "messages", Usage: "in-app messages to load over the seeded subscribers, with their workflow"},
			&cli.IntFlag{Name: "hot-every", Value: 100, Usage: "every n-th message goes to subscriber 0 (a very large inbox)"},
			&cli.BoolFlag{Name: "inbox-states", Usage: "give messages severities, tags, data, archives and snoozes (the v2 inbox's state)"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			n, from := c.Int("subscribers"), c.Int("from")
			if n < 1 || from < 0 || c.Int("batch") < 1 || c.Int("workers") < 1 {
				return errors.New("--subscribers, --batch and --workers must be positive, --from at least 0")
			}
			a, err := open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			first, err := a.Bootstrap(ctx)
			if err != nil {
				return err
			}
			if first != nil {
				fmt.Fprintln(stderr, "First start: created the development and production environments. Their API keys (shown only now):")
				for _, env := range firstEnvironmentNames(first) {
					fmt.Fprintf(stderr, "  %-12s %s\n", env, first.Keys[env])
				}
			}
			envName := c.String("environment")
			env, err := a.Store.EnvironmentGetByName(ctx, envName)
			if err != nil {
				return fmt.Errorf("environment %q: %w", envName, err)
			}
			gen := seed.New(store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}, c.Uint64("seed"))

			fmt.Fprintf(stderr, "seeding %d subscribers into %s (%s)\n", n, envName, a.Store.Dialect())
			bar := seed.NewProgress(stderr, n)
			start := time.Now()
			err = seed.Load(ctx, gen, a.Store.SubscriberBulkLoad, seed.LoadOptions{
				From: from, Count: n, Batch: c.Int("batch"), Workers: c.Int("workers"), Progress: bar.Add,
			})
			bar.Finish()
			if errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("some of subscribers %d..%d exist already in %s (use --from to add more): %w", from, from+n-1, envName, err)
			}
			if err != nil {
				return err
			}
			took := time.Since(start)
			if a.Store.Dialect() == "postgres" {
				// Fresh statistics, so the first queries are planned for the real size,
				// and GIN pending lists merged, so the first searches need not scan them.
				if _, err := a.Store.Writer().ExecContext(ctx, "VACUUM ANALYZE subscribers"); err != nil {
					return fmt.Errorf("analyze: %w", err)
				}
			}
			printScheme(stdout, gen, envName, a.Store.Dialect(), from, n, c.Uint64("seed"), took)
			if m := c.Int("messages"); m > 0 {
				return seedMessages(ctx, a, gen, env, from+n, m, c.Int("hot-every"), c.Int("workers"), c.Bool("inbox-states"),
					stdout, stderr)
			}
			return nil
		},
	}
}

func firstEnvironmentNames(f *app.FirstStart) []string {
	return slices.Sorted(maps.Keys(f.Keys))
}

// printScheme tells benchmarks and people what was loaded and how to query it.
func printScheme(w io.Writer, gen *seed.Generator, env, dialect string, from, n int, seedValue uint64, took time.Duration) {
	last := from + n - 1
	s0, sN := gen.Subscriber(from), gen.Subscriber(last)
	fmt.Fprintf(w, "seeded %d subscribers into %s (%s) in %s (%.0f rows/s)\n", n, env, dialect,
		took.Round(time.Second), float64(n)/took.Seconds())
	fmt.Fprintf(w, "scheme (seed %d), subscriber n from %d to %d:\n", seedValue, from, last)
	fmt.Fprintf(w, "  subscriberId  sub-%%08d              %s … %s\n", s0.SubscriberID, sN.SubscriberID)
	fmt.Fprintf(w, "  email         first.last.n@domain    %s … %s\n", *s0.Email, *sN.Email)
	fmt.Fprintf(w, "  name          %q … %q (last names: %d, about equally common)\n",
		*s0.FirstName+" "+*s0.LastName, *sN.FirstName+" "+*sN.LastName, len(seed.LastNames()))
	fmt.Fprintf(w, "  createdAt     %s + n × %s; _id sorts like n\n", seed.Epoch.Format(time.RFC3339), seed.Spacing)
	fmt.Fprintf(w, "benchmarks: HERALD_BENCH_SUBSCRIBERS=%d go test ./internal/bench -run '^$' -bench . "+
		"(with HERALD_BENCH_DATABASE_URL or HERALD_BENCH_SQLITE_PATH pointing here)\n", last+1)
}

// seedMessages loads m in-app messages of a one-step workflow
// ("seeded-inbox", created when missing) over subscribers 0..subscribers-1.
func seedMessages(ctx context.Context, a *app.App, gen *seed.Generator, env store.Environment, subscribers, m, hotEvery, workers int,
	states bool, stdout, stderr io.Writer) error {
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	wf, err := a.Store.WorkflowGet(ctx, scope, "seeded-inbox")
	if errors.Is(err, store.ErrNotFound) {
		now := time.Now().UTC()
		wf = store.Workflow{ID: id.New(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID, Key: "seeded-inbox",
			Name: "Seeded inbox", Active: true, Severity: "none", CreatedAt: now, UpdatedAt: now,
			Steps: []store.Step{{ID: id.New(), StepID: "inbox", Name: "Inbox", Type: "in_app",
				ControlValues: map[string]any{"body": "{{payload.text}}"}}}}
		err = a.Store.WorkflowCreate(ctx, &wf)
	}
	if err != nil {
		return fmt.Errorf("workflow: %w", err)
	}
	mg := seed.NewMessages(gen, subscribers, max(hotEvery, 1), wf.ID, wf.Key)
	mg.States = states
	fmt.Fprintf(stderr, "seeding %d in-app messages over %d subscribers (%s)\n", m, subscribers, a.Store.Dialect())
	bar := seed.NewProgress(stderr, m)
	start := time.Now()
	err = seed.LoadMessages(ctx, mg, a.Store.MessageBulkLoad, seed.LoadOptions{Count: m, Batch: 5000, Workers: workers, Progress: bar.Add})
	bar.Finish()
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(stdout, "seeded %d messages of workflow %s in %s (%.0f rows/s); subscriber 0 holds %d of them\n",
		m, wf.Key, took.Round(time.Second), float64(m)/took.Seconds(), mg.HotCount(m))
	return nil
}
