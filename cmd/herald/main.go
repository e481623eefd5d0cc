// Command herald is Herald's one binary: the API server and its workers,
// migrations, API keys, session tokens and benchmark seeding.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"text/tabwriter"
	"time"
	_ "time/tzdata" // IANA zones for subscriber timezones, whatever the host has

	"github.com/urfave/cli/v3"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/dashboard"
	"github.com/herald-notify/herald/internal/deliveryevents"
	"github.com/herald-notify/herald/internal/demo"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/realtime"
	"github.com/herald-notify/herald/internal/retention"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/webhooks"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	if err := command(os.Stdout, os.Stderr).Run(context.Background(), os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(1)
	}
}

func command(stdout, stderr io.Writer) *cli.Command {
	var cfg config.Config
	storeFlags := []cli.Flag{
		&cli.StringFlag{Name: "data-dir", Value: "./herald-data", Usage: "directory of the SQLite database and the generated secret",
			Sources: cli.EnvVars("HERALD_DATA_DIR"), Destination: &cfg.DataDir},
		&cli.StringFlag{Name: "database-url", Usage: "a postgres:// URL selects PostgreSQL (default: SQLite in the data directory)",
			Sources: cli.EnvVars("HERALD_DATABASE_URL"), Destination: &cfg.DatabaseURL},
		&cli.StringFlag{Name: "secret", Usage: "server secret for credential encryption and session tokens (default: generated into the data directory)",
			Sources: cli.EnvVars("HERALD_SECRET"), Destination: &cfg.Secret},
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json", Sources: cli.EnvVars("HERALD_LOG_FORMAT"), Destination: &cfg.LogFormat},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", Sources: cli.EnvVars("HERALD_LOG_LEVEL"), Destination: &cfg.LogLevel},
	}
	envFlag := &cli.StringFlag{Name: "environment", Value: "development", Usage: "environment name"}
	open := func(ctx context.Context) (*app.App, error) { return app.Open(ctx, cfg) }

	return &cli.Command{
		Name:      "herald",
		Usage:     "notification infrastructure server",
		Writer:    stdout,
		ErrWriter: stderr,
		Flags:     storeFlags,
		Commands: []*cli.Command{
			{
				Name:  "serve",
				Usage: "run the API and the workers",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "addr", Value: "127.0.0.1:3000", Usage: "listen address", Sources: cli.EnvVars("HERALD_ADDR"), Destination: &cfg.Addr},
					&cli.StringFlag{Name: "role", Value: "all", Usage: "all, api or worker", Sources: cli.EnvVars("HERALD_ROLE"), Destination: &cfg.Role},
					&cli.StringFlag{Name: "api-key", Usage: "the development environment's API key on first start", Sources: cli.EnvVars("HERALD_API_KEY"), Destination: &cfg.APIKey},
					&cli.FloatFlag{Name: "rate-limit", Usage: "requests per second per environment (0: off)", Sources: cli.EnvVars("HERALD_RATE_LIMIT"), Destination: &cfg.RateLimit},
					&cli.IntFlag{Name: "auth-failure-limit", Value: 20, Usage: "failed authentications per minute per client address, then 429 (0: off)",
						Sources: cli.EnvVars("HERALD_AUTH_FAILURE_LIMIT"), Destination: &cfg.AuthFailureLimit},
					&cli.DurationFlag{Name: "render-timeout", Value: sandbox.DefaultLimits.Timeout, Usage: "CPU time of one render of a step's templates (wall time at most 10x)",
						Sources: cli.EnvVars("HERALD_RENDER_TIMEOUT"), Destination: &cfg.Render.Timeout},
					&cli.IntFlag{Name: "render-max-iterations", Value: sandbox.DefaultLimits.MaxIterations, Usage: "loop iterations and filter calls of one render",
						Sources: cli.EnvVars("HERALD_RENDER_MAX_ITERATIONS"), Destination: &cfg.Render.MaxIterations},
					&cli.IntFlag{Name: "render-max-output", Value: sandbox.DefaultLimits.MaxOutput, Usage: "bytes of one rendered template",
						Sources: cli.EnvVars("HERALD_RENDER_MAX_OUTPUT"), Destination: &cfg.Render.MaxOutput},
					&cli.StringFlag{Name: "debug-addr", Usage: "serve Go's profiler (pprof) and /metrics, without a token, on this separate address, e.g. 127.0.0.1:6060 (off when empty)",
						Sources: cli.EnvVars("HERALD_DEBUG_ADDR"), Destination: &cfg.DebugAddr},
					&cli.StringFlag{Name: "metrics-token", Usage: "Bearer token that GET /metrics requires (open when empty)",
						Sources: cli.EnvVars("HERALD_METRICS_TOKEN"), Destination: &cfg.MetricsToken},
					&cli.IntFlag{Name: "workers", Value: 2, Usage: "job claim loops of this process (each runs a batch at a time)",
						Sources: cli.EnvVars("HERALD_WORKERS"), Destination: &cfg.Workers},
					&cli.BoolFlag{Name: "allow-private-networks", Usage: "let provider calls and webhooks reach loopback, private, link-local and metadata addresses",
						Sources: cli.EnvVars("HERALD_ALLOW_PRIVATE_NETWORKS"), Destination: &cfg.Delivery.AllowPrivateNetworks},
					&cli.DurationFlag{Name: "provider-timeout", Value: 10 * time.Second, Usage: "time limit of one call to a provider",
						Sources: cli.EnvVars("HERALD_PROVIDER_TIMEOUT"), Destination: &cfg.Delivery.Timeout},
					&cli.IntFlag{Name: "delivery-attempts", Value: 3, Usage: "tries of a temporary provider failure on one integration before failing over",
						Sources: cli.EnvVars("HERALD_DELIVERY_ATTEMPTS"), Destination: &cfg.Delivery.Attempts},
					&cli.IntFlag{Name: "provider-concurrency", Value: engine.DefaultPerIntegration, Usage: "calls in flight to one integration per process (an integration's configurations.maxConcurrency overrides it; SMTP: 32 connections)",
						Sources: cli.EnvVars("HERALD_PROVIDER_CONCURRENCY"), Destination: &cfg.Delivery.PerIntegration},
					&cli.IntFlag{Name: "trigger-writers", Value: 0, Usage: "trigger groups written at once on PostgreSQL (0: half the cores, at most 8, at least 2 across a network; SQLite writes one)",
						Sources: cli.EnvVars("HERALD_TRIGGER_WRITERS"), Destination: &cfg.TriggerWriters},
					&cli.IntFlag{Name: "jobs-in-flight", Value: engine.DefaultMaxInFlight, Usage: "jobs claimed and not yet finished per process: delivery batches wait on providers, and the workers claim the next ones meanwhile",
						Sources: cli.EnvVars("HERALD_JOBS_IN_FLIGHT"), Destination: &cfg.JobsInFlight},
					&cli.StringFlag{Name: "cors-origins", Value: "*", Usage: "origins whose pages may call the API, comma-separated (e.g. https://app.example.com), or * for any",
						Sources: cli.EnvVars("HERALD_CORS_ORIGINS"), Destination: &cfg.CORSOrigins},
					&cli.DurationFlag{Name: "inbox-session-ttl", Value: httpapi.DefaultInboxSessionTTL, Usage: "how long an inbox session token (POST /v1/inbox/session) is valid",
						Sources: cli.EnvVars("HERALD_INBOX_SESSION_TTL"), Destination: &cfg.InboxSessionTTL},
					&cli.StringFlag{Name: "webhook-retry-schedule", Value: webhooks.DefaultScheduleText, Usage: "delays of an outbound webhook's attempts, comma-separated: the first after the event, each next after the previous failed",
						Sources: cli.EnvVars("HERALD_WEBHOOK_RETRY_SCHEDULE"), Destination: &cfg.WebhookRetrySchedule},
					&cli.DurationFlag{Name: "webhook-timeout", Value: webhooks.DefaultTimeout, Usage: "time limit of one outbound webhook attempt; what a process that stopped had in hand (attempts, outbox entries) is taken again after 4x (2x) it",
						Sources: cli.EnvVars("HERALD_WEBHOOK_TIMEOUT"), Destination: &cfg.WebhookTimeout},
					&cli.BoolFlag{Name: "demo-page", Value: true, Usage: "serve the demo inbox page at /demo (the development environment's demo subscriber; --demo-page=false turns it off)",
						Sources: cli.EnvVars("HERALD_DEMO_PAGE"), Destination: &cfg.DemoPage},
					&cli.StringFlag{Name: "retention-activity", Value: "30d", Usage: "how long finished triggers, their activity and transactionId reservations are kept: a duration (12h) or days (30d, 1.5d); 0 keeps forever",
						Sources: cli.EnvVars("HERALD_RETENTION_ACTIVITY"), Destination: &cfg.Retention.Activity},
					&cli.StringFlag{Name: "retention-inbox", Value: "365d", Usage: "how long in-app messages are kept: a duration or days; 0 keeps forever",
						Sources: cli.EnvVars("HERALD_RETENTION_INBOX"), Destination: &cfg.Retention.Inbox},
					&cli.StringFlag{Name: "retention-interval", Value: "1h", Usage: "how often the retention purge runs (in worker processes: --role all or worker)",
						Sources: cli.EnvVars("HERALD_RETENTION_INTERVAL"), Destination: &cfg.Retention.Interval},
				},
				Action: func(ctx context.Context, _ *cli.Command) error { return serve(ctx, cfg, systemConsole(stdout, stderr)) },
			},
			{
				Name:  "migrate",
				Usage: "apply database migrations and exit",
				Action: func(ctx context.Context, _ *cli.Command) error {
					a, err := open(ctx)
					if err != nil {
						return err
					}
					defer a.Close()
					fmt.Fprintln(stdout, "migrations applied ("+a.Store.Dialect()+")")
					return nil
				},
			},
			keysCommand(open, envFlag, stdout),
			userCommand(open, stdout),
			environmentCommand(open, envFlag, stdout),
			secretCommand(&cfg, stdout),
			backupCommand(&cfg, stdout),
			restoreCommand(&cfg, stdout),
			{
				Name:  "token",
				Usage: "print a short-lived session token of the organization's owner (a dashboard caller)",
				Flags: []cli.Flag{envFlag, &cli.DurationFlag{Name: "ttl", Value: time.Hour, Usage: "how long the token is valid"}},
				Action: func(ctx context.Context, c *cli.Command) error {
					a, err := open(ctx)
					if err != nil {
						return err
					}
					defer a.Close()
					env, err := a.Store.EnvironmentGetByName(ctx, c.String("environment"))
					if err != nil {
						return fmt.Errorf("environment %q: %w", c.String("environment"), err)
					}
					owner, err := a.Store.MemberGetOwner(ctx, env.OrganizationID)
					if err != nil {
						return fmt.Errorf("owner: %w", err)
					}
					tok, err := a.Keys.SignSession(secret.Session{MemberID: owner.ID, OrganizationID: env.OrganizationID,
						EnvironmentID: env.ID, ExpiresAt: time.Now().Add(c.Duration("ttl"))})
					if err != nil {
						return err
					}
					fmt.Fprintln(stdout, tok)
					return nil
				},
			},
			seedCommand(open, envFlag, stdout, stderr),
			benchCommand(open, stdout, stderr),
			healthcheckCommand(stdout),
			{
				Name:  "version",
				Usage: "print the version",
				Action: func(context.Context, *cli.Command) error {
					fmt.Fprintln(stdout, "herald", version)
					return nil
				},
			},
		},
	}
}

func keysCommand(open func(context.Context) (*app.App, error), envFlag cli.Flag, stdout io.Writer) *cli.Command {
	withEnv := func(fn func(ctx context.Context, a *app.App, envID string, c *cli.Command) error) cli.ActionFunc {
		return withStore(open, func(ctx context.Context, a *app.App, c *cli.Command) error {
			env, err := a.Store.EnvironmentGetByName(ctx, c.String("environment"))
			if err != nil {
				return fmt.Errorf("environment %q: %w", c.String("environment"), err)
			}
			return fn(ctx, a, env.ID, c)
		})
	}
	return &cli.Command{
		Name:  "keys",
		Usage: "manage API keys",
		Commands: []*cli.Command{
			{
				Name: "create", Usage: "create an API key and print it (shown only once)", Flags: []cli.Flag{envFlag},
				Action: withEnv(func(ctx context.Context, a *app.App, envID string, _ *cli.Command) error {
					key := secret.NewAPIKey()
					rec := app.NewKeyRecord(envID, key, time.Now())
					if err := a.Store.APIKeyCreate(ctx, &rec); err != nil {
						return err
					}
					fmt.Fprintln(stdout, key)
					return nil
				}),
			},
			{
				Name: "list", Usage: "list API keys (prefixes only)", Flags: []cli.Flag{envFlag},
				Action: withEnv(func(ctx context.Context, a *app.App, envID string, _ *cli.Command) error {
					keys, err := a.Store.APIKeyList(ctx, envID)
					if err != nil {
						return err
					}
					tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tPREFIX\tCREATED\tREVOKED")
					for _, k := range keys {
						revoked := "-"
						if k.RevokedAt != nil {
							revoked = k.RevokedAt.Format(time.RFC3339)
						}
						fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\n", k.ID, k.Prefix, k.CreatedAt.Format(time.RFC3339), revoked)
					}
					return tw.Flush()
				}),
			},
			{
				Name: "revoke", Usage: "revoke an API key", ArgsUsage: "KEY_ID", Flags: []cli.Flag{envFlag},
				Action: withEnv(func(ctx context.Context, a *app.App, envID string, c *cli.Command) error {
					if c.Args().Len() != 1 {
						return errors.New("usage: herald keys revoke --environment NAME KEY_ID")
					}
					if err := a.Store.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: envID, ID: c.Args().First(),
						Now: time.Now()}); err != nil {
						return fmt.Errorf("key %s: %w", c.Args().First(), err)
					}
					fmt.Fprintln(stdout, "revoked", c.Args().First())
					return nil
				}),
			},
		},
	}
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// defaultGCPercent is the server's GOGC unless the environment sets one: a
// feed read or a trigger allocates much and keeps little, and at Go's
// default of 100 the collector took a fifth of the server's CPU under load
// (README, Configuration).
const defaultGCPercent = 300

func setGCPercent() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

func serve(ctx context.Context, cfg config.Config, con console) error {
	switch cfg.Role {
	case "all", "api", "worker":
	default:
		return fmt.Errorf("--role must be all, api or worker, not %q", cfg.Role)
	}
	schedule, err := webhooks.ParseSchedule(cfg.WebhookRetrySchedule)
	if err != nil {
		return fmt.Errorf("--webhook-retry-schedule: %w", err)
	}
	log := newLogger(cfg, con.log)
	setGCPercent()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	first, err := a.Bootstrap(ctx)
	if err != nil {
		return err
	}
	go purgeLoop(ctx, a, log)
	met := metrics.New(metrics.Options{Stats: a.Store, Pools: metrics.Pools(a.Store.Writer(), a.Store.Reader()), Logger: log})
	// Retention: the purge runs where the workers do; every process exports
	// the store's size (app.Open validated the settings).
	keep, err := cfg.Retention.Parse()
	if err != nil {
		return err
	}
	go retention.New(retention.Options{Store: a.Store, Retention: keep, SizeOnly: cfg.Role == "api", Metrics: met, Logger: log}).Run(ctx)
	if cfg.DebugAddr != "" {
		if _, err := serveDebug(ctx, cfg.DebugAddr, log, met.Handler()); err != nil {
			return err
		}
	}
	sb := sandbox.New(cfg.Render)
	// A group of triggers runs its in-app first steps before it is written
	// (engine.InAppPlanner), in the process that takes the triggers.
	a.Store.SetTriggerPlanner(engine.InAppPlanner(sb, a.Store))
	a.Store.SetTriggerWriters(cfg.TriggerWriters)
	if a.Store.Dialect() == "postgres" {
		log.Info("trigger groups written at once", "writers", a.Store.TriggerWriters(), "databaseRoundTrip", a.Store.RTT().String())
	}

	// Outbound webhooks: every change writes its events' outbox entry in
	// its own transaction; every process drains the outbox (its own
	// entries at once, the others' within a second); a worker sends the
	// events.
	wh := webhooks.New(webhooks.Options{Store: a.Store, Logger: log, Metrics: met, Schedule: schedule, Timeout: cfg.WebhookTimeout,
		AllowPrivateNetworks: cfg.Delivery.AllowPrivateNetworks})
	wh.Outbox(a.Store)
	met.WebhookQueue(wh.QueueStats, log)
	go wh.Run(ctx)
	// Realtime: this process's hub hears its own commits through the
	// store's hook and, on PostgreSQL, other processes' through LISTEN; a
	// worker only sends its commits on (the hook's NOTIFY).
	var rt *realtime.Dispatcher
	if cfg.Role == "worker" {
		a.Store.OnInboxChange(func(store.InboxChange) {}) // the NOTIFY to the API processes' hubs
	} else {
		rt = realtime.NewDispatcher(realtime.NewHub(), a.Store, log)
		a.Store.OnInboxChange(rt.Changed)
		go rt.Run(ctx)
		go rt.Listen(ctx, a.Store.ListenInbox)
	}
	// One bridge client (Novu Framework apps) for syncs and step executions.
	bridgeClient := bridge.New(bridge.Options{Dialer: &netguard.Dialer{AllowPrivate: cfg.Delivery.AllowPrivateNetworks}})
	var eng *engine.Engine
	var workersDone, sendDone chan struct{}
	if cfg.Role != "api" {
		eng = engine.New(engine.Options{Store: a.Store, Logger: log, Listen: a.Store.ListenJobs, Sandbox: sb, Workers: cfg.Workers, Metrics: met,
			MaxInFlight: cfg.JobsInFlight, Bridge: bridgeClient,
			Delivery: engine.DeliveryOptions{AllowPrivateNetworks: cfg.Delivery.AllowPrivateNetworks,
				Timeout: cfg.Delivery.Timeout, Attempts: cfg.Delivery.Attempts, PerIntegration: cfg.Delivery.PerIntegration}})
		met.InFlight(eng.InFlight)
		workersDone = make(chan struct{})
		go func() {
			defer close(workersDone)
			eng.Run(ctx)
		}()
		sendDone = make(chan struct{})
		go func() {
			defer close(sendDone)
			wh.Send(ctx)
		}()
	}
	onTrigger := func() {}
	if eng != nil {
		onTrigger = eng.Wake
	}
	if cfg.Role == "worker" {
		// A worker still answers /health, so orchestrators can probe it.
		cfg.Addr = workerAddr(cfg.Addr)
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	origins, err := cfg.Origins()
	if err != nil {
		return err
	}
	var handler http.Handler = httpapi.New(httpapi.Options{Store: a.Store, Keys: a.Keys, Logger: log,
		RateLimit: cfg.RateLimit, AuthFailureLimit: cfg.AuthFailureLimit, OnTrigger: onTrigger, Sandbox: sb,
		CORSOrigins: origins, InboxSessionTTL: cfg.InboxSessionTTL, Realtime: rt, Metrics: met, MetricsToken: cfg.MetricsToken,
		Bridge: bridgeClient, Webhooks: wh,
		// SES's delivery events: SNS's certificates and subscription confirmations.
		SNS: deliveryevents.NewSNS(deliveryevents.SNSOptions{Dialer: &netguard.Dialer{AllowPrivate: cfg.Delivery.AllowPrivateNetworks}})})
	var dash *dashboard.Dashboard
	if cfg.Role != "worker" {
		dash = dashboard.New(dashboard.Options{Store: a.Store, Keys: a.Keys, API: handler, Sandbox: sb, Logger: log,
			Delivery: engine.DeliveryOptions{AllowPrivateNetworks: cfg.Delivery.AllowPrivateNetworks, Timeout: cfg.Delivery.Timeout}})
		handler = dash.Wrap(handler)
	}
	var page *demo.Page
	if cfg.DemoPage && cfg.Role != "worker" {
		if page, err = demo.Setup(ctx, a.Store, log); err != nil {
			return err
		}
		handler = page.Wrap(handler)
	}
	if cfg.Role == "worker" {
		// A worker's listener answers /health and /metrics (with the
		// same token as the API's) and nothing else.
		health := http.NewServeMux()
		health.Handle("GET /health", handler)
		health.Handle("GET /metrics", handler)
		handler = health
	}
	srv := &http.Server{
		Handler:           httpapi.WithDeadlines(handler),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if rt != nil {
		srv.RegisterOnShutdown(rt.Close)
	}
	base := "http://" + ln.Addr().String()
	printBanner(con.out, base, a, first)
	if page != nil {
		// Standard output never carries a key: the curl line names it.
		fmt.Fprintf(con.out, "Demo inbox: %s%s/ (development environment) — with HERALD_API_KEY set to a development API key,"+
			" trigger its workflow:\n  %s\n", base, demo.Path, demo.Curl(base, ""))
	}
	if dash != nil {
		if err := printDashboard(ctx, con.out, base, a); err != nil {
			return err
		}
	}
	if first != nil {
		showFirstStartKeys(con, cfg.DataDir, base, first, log)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests and job batches")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if workersDone != nil {
		<-workersDone
		<-sendDone
	}
	return err
}

// workerAddr keeps a worker's address unless it is the API's default, which
// a worker beside an API process would collide with: then any free port.
func workerAddr(addr string) string {
	if addr == "127.0.0.1:3000" {
		return "127.0.0.1:0"
	}
	return addr
}

// printBanner says where Herald runs; never the keys of a first start
// (showFirstStartKeys shows those).
func printBanner(w io.Writer, base string, a *app.App, first *app.FirstStart) {
	store := "SQLite at " + a.Config.SQLitePath()
	if a.Config.Postgres() {
		store = "PostgreSQL"
	}
	fmt.Fprintf(w, "Herald %s is running at %s (%s, role %s)\n", version, base, store, a.Config.Role)
	if first == nil {
		fmt.Fprintln(w, "API keys were shown at first start. Make another with: herald keys create --environment development")
	}
	fmt.Fprintln(w, "API document: "+base+"/openapi.json")
}

// purgeLoop deletes expired idempotency records every hour.
func purgeLoop(ctx context.Context, a *app.App, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	purge := func() {
		defer func() {
			if p := recover(); p != nil {
				log.Error("recovered from a panic", "in", "purging idempotency keys", "panic", fmt.Sprint(p))
			}
		}()
		if n, err := a.Store.IdempotencyPurge(ctx, time.Now()); err != nil && ctx.Err() == nil {
			log.Warn("purging idempotency keys", "err", err)
		} else if n > 0 {
			log.Info("purged idempotency keys", "count", n)
		}
	}
	for {
		purge()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
