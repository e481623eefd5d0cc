package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// countWorkers read the subscribers' counts in parallel.
const countWorkers = 8

// triggers is the trigger phase: its clients and probes.
type triggers struct {
	start    time.Time
	took     time.Duration
	sent     int
	accepted int
	latency  latencies
	errors   errorCounts
	// perSubscriber counts the accepted triggers of each subscriber: the
	// messages its feed must end with.
	perSubscriber []atomic.Int64
	mu            sync.Mutex
	last          []string // the last transactionIds each client had accepted
	// probes finish after the phase: their last trigger's message is still
	// being looked for.
	probes      sync.WaitGroup
	feedLatency latencies
	probeErrors errorCounts

	nSent, nAccepted atomic.Int64
	wf               []byte   // the workflowId, JSON-quoted
	to               [][]byte // the subscriberIds, JSON-quoted
}

// lastPerClient transactionIds of each client are looked for first after
// the phase (at most 100 in all: one GET /v1/messages).
const lastPerClient = 3

func triggerPhase(ctx context.Context, a *api, cfg *Config, workflowID string, subs []string) *triggers {
	t := &triggers{perSubscriber: make([]atomic.Int64, len(subs))}
	t.wf, _ = json.Marshal(workflowID)
	for _, s := range subs {
		q, _ := json.Marshal(s)
		t.to = append(t.to, q)
	}
	var next atomic.Int64
	var clients sync.WaitGroup
	// A probe sends under probing's read lock, so that taking the write
	// lock waits for the probes' triggers in flight but not for their polls.
	var probing sync.RWMutex
	t.probes.Add(cfg.Probes)
	t.start = time.Now()
	end := t.start.Add(cfg.Duration)
	shared := len(subs) - cfg.Probes // the clients' subscribers; a probe's own follow
	for range cfg.Clients {
		clients.Go(func() {
			var last []string
			for time.Now().Before(end) && ctx.Err() == nil {
				i := int((next.Add(1) - 1) % int64(shared))
				if tx, ok := t.send(ctx, a, i); ok {
					if last = append(last, tx); len(last) > lastPerClient {
						last = last[1:]
					}
				}
			}
			t.mu.Lock()
			t.last = append(t.last, last...)
			t.mu.Unlock()
		})
	}
	for p := range cfg.Probes {
		go func() {
			defer t.probes.Done()
			for {
				probing.RLock()
				if !time.Now().Before(end) || ctx.Err() != nil {
					probing.RUnlock()
					return
				}
				i := shared + p
				t0 := time.Now()
				tx, ok := t.send(ctx, a, i)
				probing.RUnlock()
				if ok {
					t.probe(ctx, a, cfg, subs[i], tx, t0)
				}
			}
		}()
	}
	clients.Wait()
	probing.Lock()
	t.took = time.Since(t.start)
	t.sent, t.accepted = int(t.nSent.Load()), int(t.nAccepted.Load())
	probing.Unlock()
	return t
}

// send sends one trigger to subscriber i and checks the answer.
func (t *triggers) send(ctx context.Context, a *api, i int) (string, bool) {
	n := t.nSent.Add(1)
	body := fmt.Appendf(nil, `{"name":%s,"to":%s,"payload":{"order":"A-%d","items":[1,2,3],"when":"2026-11-23T10:00:00Z"}}`,
		t.wf, t.to[i], n)
	t0 := time.Now()
	status, raw, err := a.do(ctx, "POST", "/v1/events/trigger", body)
	if err != nil {
		t.errors.add("trigger: request failed: " + clip([]byte(err.Error())))
		return "", false
	}
	t.latency.add(time.Since(t0))
	answer, wrong := checkTrigger(status, raw)
	if wrong != "" {
		t.errors.add("trigger: " + wrong)
		return "", false
	}
	t.nAccepted.Add(1)
	t.perSubscriber[i].Add(1)
	return answer.TransactionID, true
}

// probe waits until the transaction's message is in the subscriber's feed,
// and records the time since its trigger was sent (t0). It polls the unseen
// count (a counter, written in the transaction that stores the message) and
// reads the feed when the count moves, so that probing costs the server
// little more than the load it measures.
func (t *triggers) probe(ctx context.Context, a *api, cfg *Config, subscriberID, tx string, t0 time.Time) {
	deadline := time.Now().Add(cfg.DeliveryTimeout)
	last := -1
	for ctx.Err() == nil {
		n, wrong := t.unseen(ctx, a, subscriberID)
		if wrong != "" {
			t.probeErrors.add("unseen: " + wrong)
			return
		}
		if n != last {
			status, raw, err := a.do(ctx, "GET", feedPath(subscriberID, 20), nil)
			if err != nil {
				t.probeErrors.add("feed: request failed: " + clip([]byte(err.Error())))
				return
			}
			p, wrong := checkFeed(status, raw)
			if wrong != "" {
				t.probeErrors.add("feed: " + wrong)
				return
			}
			if slices.ContainsFunc(p.Data, func(d feedItem) bool { return d.TransactionID == tx }) {
				t.feedLatency.add(time.Since(t0))
				return
			}
			last = n
		}
		if time.Now().After(deadline) {
			t.probeErrors.add(fmt.Sprintf("probe: a message not in its feed %s after the trigger", cfg.DeliveryTimeout))
			return
		}
		sleep(ctx, cfg.PollEvery)
	}
}

// unseen reads a subscriber's unseen count; wrong says what was wrong with
// the answer.
func (t *triggers) unseen(ctx context.Context, a *api, subscriberID string) (int, string) {
	var out struct {
		Count *int `json:"count"`
	}
	status, raw, err := a.do(ctx, "GET", "/v1/subscribers/"+url.PathEscape(subscriberID)+"/notifications/unseen", nil)
	switch {
	case err != nil:
		return 0, "request failed: " + clip([]byte(err.Error()))
	case status != 200:
		return 0, fmt.Sprintf("status %d", status)
	case json.Unmarshal(raw, &out) != nil || out.Count == nil:
		return 0, "body is not {\"count\": n}"
	}
	return *out.Count, ""
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// delivery is the wait for the messages after the trigger phase.
type delivery struct {
	delivered int
	at        time.Time // when every message was in its feed (or the wait ended)
	problem   string
	errors    errorCounts
}

// waitDelivery waits until every accepted trigger's message is in its
// subscriber's feed. It first polls GET /v1/messages for the last
// transactions of each client (one request), then checks every subscriber's
// count (GET …/notifications/unseen, kept by counters: exact and cheap
// however large the feed; nobody reads these feeds, so unseen is all). When
// the first full count already matches, the messages were all there when
// the last ones were seen; otherwise the full counts repeat until they match.
func waitDelivery(ctx context.Context, a *api, cfg *Config, t *triggers, subs []string) *delivery {
	d := &delivery{}
	deadline := time.Now().Add(cfg.DeliveryTimeout)
	last := t.last[:min(len(t.last), 100)]
	q := url.Values{"channel": {"in_app"}, "limit": {"100"}, "transactionId": last}
	for len(last) > 0 && ctx.Err() == nil {
		var out struct {
			TotalCount *int `json:"totalCount"`
		}
		status, raw, err := a.do(ctx, "GET", "/v1/messages?"+q.Encode(), nil)
		switch {
		case err != nil:
			d.errors.add("messages: request failed: " + clip([]byte(err.Error())))
		case status != 200:
			d.errors.add(fmt.Sprintf("messages: status %d", status))
		case json.Unmarshal(raw, &out) != nil || out.TotalCount == nil:
			d.errors.add("messages: body is not a page with totalCount")
		case *out.TotalCount > len(last):
			d.problem = fmt.Sprintf("%d messages for %d transactions", *out.TotalCount, len(last))
		}
		if (out.TotalCount != nil && *out.TotalCount >= len(last)) || time.Now().After(deadline) {
			break
		}
		sleep(ctx, 20*time.Millisecond)
	}
	lastSeen := time.Now()
	d.at = lastSeen
	for first := true; ctx.Err() == nil; first = false {
		counts, ok := countAll(ctx, a, subs, &d.errors)
		passEnd := time.Now()
		missing, extra := 0, 0
		d.delivered = 0
		for i, n := range counts {
			d.delivered += n
			want := int(t.perSubscriber[i].Load())
			missing += max(want-n, 0)
			extra += max(n-want, 0)
		}
		d.at = passEnd
		switch {
		case extra > 0:
			d.problem = fmt.Sprintf("%d messages more than triggers accepted (%d subscribers counted)", extra, len(subs))
			return d
		case ok && missing == 0:
			if first && d.problem == "" {
				d.at = lastSeen
			}
			return d
		case time.Now().After(deadline):
			d.problem = fmt.Sprintf("%d of %d messages in the feeds %s after the trigger phase", d.delivered, t.accepted, cfg.DeliveryTimeout)
			return d
		}
		sleep(ctx, 100*time.Millisecond)
	}
	return d
}

// countAll reads every subscriber's message count; ok is false when an
// answer was wrong (counted in errs).
func countAll(ctx context.Context, a *api, subs []string, errs *errorCounts) ([]int, bool) {
	counts := make([]int, len(subs))
	var next atomic.Int64
	var bad atomic.Bool
	var wg sync.WaitGroup
	for range countWorkers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(subs) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				var out struct {
					Count *int `json:"count"`
				}
				status, raw, err := a.do(ctx, "GET", "/v1/subscribers/"+url.PathEscape(subs[i])+"/notifications/unseen", nil)
				switch {
				case err != nil:
					errs.add("count: request failed: " + clip([]byte(err.Error())))
				case status != 200:
					errs.add(fmt.Sprintf("count: status %d", status))
				case json.Unmarshal(raw, &out) != nil || out.Count == nil:
					errs.add("count: body is not {\"count\": n}")
				default:
					counts[i] = *out.Count
					continue
				}
				bad.Store(true)
			}
		})
	}
	wg.Wait()
	return counts, !bad.Load() && ctx.Err() == nil
}

// feeds is the feed phase.
type feeds struct {
	took    time.Duration
	reads   int
	latency latencies
	errors  errorCounts
}

// feedPhase reads the first page of random subscribers' feeds.
func feedPhase(ctx context.Context, a *api, cfg *Config, subs []string) *feeds {
	f := &feeds{}
	var reads atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(cfg.FeedDuration)
	for range cfg.FeedClients {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				t0 := time.Now()
				status, raw, err := a.do(ctx, "GET", feedPath(subs[rand.IntN(len(subs))], 10), nil)
				if err != nil {
					f.errors.add("feed: request failed: " + clip([]byte(err.Error())))
					continue
				}
				f.latency.add(time.Since(t0))
				if _, wrong := checkFeed(status, raw); wrong != "" {
					f.errors.add("feed: " + wrong)
					continue
				}
				reads.Add(1)
			}
		})
	}
	wg.Wait()
	f.took, f.reads = time.Since(start), int(reads.Load())
	return f
}
