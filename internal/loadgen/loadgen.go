// Package loadgen is Herald's load generator (herald bench). It drives a
// running Herald only through its public HTTP API, checks every answer, and
// measures the triggers accepted, the messages delivered into feeds, the time
// from a trigger to its message in the feed, and feed reads. Its baseline
// (baseline.go) runs the SQL a trigger and its delivery write, raw, against
// a fresh store of the same kind, for a ratio.
package loadgen

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// Config is one run against a server.
type Config struct {
	// URL is the server's base URL, APIKey an API key of its environment.
	URL, APIKey string
	// Subscribers are created for the run; every trigger names one of them.
	Subscribers int
	// Clients send triggers, each one at a time, for Duration.
	Clients  int
	Duration time.Duration
	// Probes are clients that send a trigger and poll its subscriber's feed
	// every PollEvery until the message is there, one after the other,
	// during the trigger phase (their triggers count as the others').
	Probes    int
	PollEvery time.Duration
	// FeedClients read feed pages for FeedDuration after delivery.
	FeedClients  int
	FeedDuration time.Duration
	// DeliveryTimeout bounds the wait for the last messages after the
	// trigger phase.
	DeliveryTimeout time.Duration
	// PID, when not zero, is the server's process: its memory is reported.
	PID int
	// Condition gives the workflow's step conditions that every trigger
	// meets (BenchCondition): the cost of evaluating them, nothing skipped.
	Condition bool
	// Workflow, when set, is the workflowId of an existing workflow to
	// trigger — one whose run makes exactly one in-app message per trigger
	// (a code-first workflow synced from a bridge, say) — instead of the
	// run's own.
	Workflow string
	// Progress receives a line per phase (nil: none).
	Progress io.Writer
}

// Defaults of Config's zero fields.
const (
	DefaultSubscribers     = 1000
	DefaultClients         = 32
	DefaultDuration        = 60 * time.Second
	DefaultProbes          = 2
	DefaultPollEvery       = 5 * time.Millisecond
	DefaultFeedClients     = 4
	DefaultFeedDuration    = 10 * time.Second
	DefaultDeliveryTimeout = 2 * time.Minute
)

func (c *Config) defaults() {
	for _, f := range []struct {
		v *int
		d int
	}{{&c.Subscribers, DefaultSubscribers}, {&c.Clients, DefaultClients}, {&c.FeedClients, DefaultFeedClients}} {
		if *f.v <= 0 {
			*f.v = f.d
		}
	}
	if c.Probes < 0 {
		c.Probes = 0
	}
	for _, f := range []struct {
		v *time.Duration
		d time.Duration
	}{{&c.Duration, DefaultDuration}, {&c.PollEvery, DefaultPollEvery}, {&c.FeedDuration, DefaultFeedDuration},
		{&c.DeliveryTimeout, DefaultDeliveryTimeout}} {
		if *f.v <= 0 {
			*f.v = f.d
		}
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Report is what a run measured.
type Report struct {
	URL                          string
	Subscribers, Clients, Probes int
	Duration                     time.Duration
	Sent, Accepted               int
	TriggersPerSecond            float64
	TriggerLatency               Summary        // of the trigger requests
	TriggerErrors                map[string]int // wrong answers to triggers, by what was wrong
	Delivered                    int
	DeliveredIn                  time.Duration // from the first trigger until every message was in its feed
	DeliveredPerSecond           float64
	DeliveryError                string         // messages missing or extra ("" when none)
	FeedLatency                  Summary        // from sending a probe's trigger to its message in the feed
	ProbeErrors                  map[string]int // wrong feed answers and messages not found by the probes
	FeedClients                  int
	FeedDuration                 time.Duration
	FeedReads                    int
	FeedReadsPerSecond           float64
	FeedRead                     Summary
	FeedErrors                   map[string]int
	Memory                       *Memory
	CountErrors                  map[string]int // wrong answers while counting the delivered messages
	workflowID, subscriberPrefix string
}

// Errors is the number of wrong answers and missing or extra messages.
func (r *Report) Errors() int {
	n := 0
	for _, m := range []map[string]int{r.TriggerErrors, r.ProbeErrors, r.FeedErrors, r.CountErrors} {
		for _, v := range m {
			n += v
		}
	}
	if r.DeliveryError != "" {
		n++
	}
	return n
}

// Run creates the run's workflow and subscribers, then runs the trigger
// phase, waits for delivery, and runs the feed phase. It returns an error
// only when the run could not be made (set-up refused, no trigger
// accepted); wrong answers are in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.URL == "" || cfg.APIKey == "" {
		return nil, errors.New("loadgen: the server URL and an API key are required")
	}
	a := newAPI(cfg.URL, cfg.APIKey, cfg.Clients+cfg.Probes+cfg.FeedClients+countWorkers)
	run := runID()
	r := &Report{URL: cfg.URL, Subscribers: cfg.Subscribers, Clients: cfg.Clients, Probes: cfg.Probes, Duration: cfg.Duration,
		FeedClients: cfg.FeedClients, FeedDuration: cfg.FeedDuration, subscriberPrefix: "bench-" + run + "-"}
	fmt.Fprintf(cfg.Progress, "creating the workflow and %d subscribers (and one for each probe)\n", cfg.Subscribers)
	var err error
	if cfg.Workflow != "" {
		r.workflowID = cfg.Workflow
	} else if r.workflowID, err = createWorkflow(ctx, a, "herald-bench-"+run, cfg.Condition); err != nil {
		return nil, err
	}
	// The clients trigger for the first Subscribers; each probe has a
	// subscriber of its own after them, whose count moves only with the
	// probe's own messages.
	subs := make([]string, cfg.Subscribers+cfg.Probes)
	for i := range subs {
		subs[i] = fmt.Sprintf("%s%d", r.subscriberPrefix, i)
	}
	if err := createSubscribers(ctx, a, subs); err != nil {
		return nil, err
	}

	fmt.Fprintf(cfg.Progress, "triggering for %s with %d clients and %d probes\n", cfg.Duration, cfg.Clients, cfg.Probes)
	t := triggerPhase(ctx, a, &cfg, r.workflowID, subs)
	r.Sent, r.Accepted, r.TriggerErrors = t.sent, t.accepted, t.errors.snapshot()
	r.TriggersPerSecond = float64(t.accepted) / t.took.Seconds()
	r.TriggerLatency = t.latency.summary()
	if t.accepted == 0 {
		return r, fmt.Errorf("loadgen: no trigger was accepted (%v)", r.TriggerErrors)
	}

	fmt.Fprintf(cfg.Progress, "waiting for %d messages\n", t.accepted)
	d := waitDelivery(ctx, a, &cfg, t, subs)
	r.Delivered, r.DeliveryError, r.CountErrors = d.delivered, d.problem, d.errors.snapshot()
	r.DeliveredIn = d.at.Sub(t.start)
	r.DeliveredPerSecond = float64(d.delivered) / r.DeliveredIn.Seconds()
	t.probes.Wait()
	r.FeedLatency, r.ProbeErrors = t.feedLatency.summary(), t.probeErrors.snapshot()

	fmt.Fprintf(cfg.Progress, "reading feeds for %s with %d clients\n", cfg.FeedDuration, cfg.FeedClients)
	f := feedPhase(ctx, a, &cfg, subs)
	r.FeedReads, r.FeedRead, r.FeedErrors = f.reads, f.latency.summary(), f.errors.snapshot()
	r.FeedReadsPerSecond = float64(f.reads) / f.took.Seconds()
	if cfg.PID != 0 {
		m := ReadMemory(cfg.PID)
		r.Memory = &m
	}
	return r, nil
}

// runID names the run's workflow and subscribers, so that runs against the
// same server count only their own messages.
func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// BenchCondition is the step condition of `herald bench --condition`: a
// typical rule over the payload and the subscriber that every trigger of
// the run meets.
var BenchCondition = map[string]any{"and": []any{
	map[string]any{"notNull": []any{map[string]any{"var": "payload.order"}}},
	map[string]any{"in": []any{"A-", map[string]any{"var": "payload.order"}}},
	map[string]any{"!=": []any{map[string]any{"var": "subscriber.data.tier"}, "blocked"}},
}}

// createWorkflow creates the one-step in-app workflow of internal/bench/wrk
// and returns its workflowId (the trigger name).
func createWorkflow(ctx context.Context, a *api, key string, condition bool) (string, error) {
	controls := map[string]any{
		"subject":       `Hi {{ subscriber.firstName | default: 'there' }}`,
		"body":          `Order {{ payload.order }} ({{ payload.items | size }} items) shipped on {{ payload.when | date: '%b %d' }}`,
		"primaryAction": map[string]any{"label": "Track", "redirect": map[string]any{"url": "/orders/{{ payload.order }}"}},
	}
	if condition {
		controls["skip"] = BenchCondition
	}
	body := map[string]any{"name": key, "workflowId": key, "steps": []any{map[string]any{
		"name": "inbox", "type": "in_app", "controlValues": controls,
	}}}
	var out struct {
		WorkflowID string `json:"workflowId"`
	}
	if err := a.call(ctx, "POST", "/v2/workflows", body, 201, &out); err != nil {
		return "", fmt.Errorf("loadgen: creating the workflow: %w", err)
	}
	if out.WorkflowID == "" {
		return "", errors.New("loadgen: the created workflow has no workflowId")
	}
	return out.WorkflowID, nil
}

// createSubscribers creates the subscribers, 500 a request.
func createSubscribers(ctx context.Context, a *api, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		items := make([]any, len(chunk))
		for i, id := range chunk {
			items[i] = map[string]any{"subscriberId": id, "firstName": "Bench"}
		}
		var out struct {
			Created []struct {
				SubscriberID string `json:"subscriberId"`
			} `json:"created"`
			Failed []any `json:"failed"`
		}
		if err := a.call(ctx, "POST", "/v1/subscribers/bulk", map[string]any{"subscribers": items}, 201, &out); err != nil {
			return fmt.Errorf("loadgen: creating subscribers: %w", err)
		}
		if len(out.Created) != len(chunk) || len(out.Failed) != 0 {
			return fmt.Errorf("loadgen: creating subscribers: %d created and %d failed of %d", len(out.Created), len(out.Failed), len(chunk))
		}
	}
	return nil
}
