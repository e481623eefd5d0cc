package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/bench"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/seed"
	"github.com/herald-notify/herald/internal/store"
)

// triggerSubscribers is how many subscribers the trigger benchmarks address.
const triggerSubscribers = 10_000

// triggerWorkflow is the one-step in_app workflow the trigger benchmarks run.
const triggerWorkflow = "bench-in-app"

// newTriggerServer is a fresh store of kind with subscribers and the
// one-step in_app workflow, served over HTTP.
func newTriggerServer(tb testing.TB, kind string) (*server, store.Workflow) {
	s := newServer(tb, kind, openStore(tb, kind, ""), triggerSubscribers)
	wf := s.createWorkflow(tb, triggerWorkflow, []map[string]any{inAppStep("Item {{payload.seq}} is ready")})
	return s, wf
}

// triggerBody is the JSON of event seq, to one subscriber.
func triggerBody(seq int64) []byte {
	b, _ := json.Marshal(map[string]any{"name": triggerWorkflow, "to": seed.SubscriberID(int(seq % triggerSubscribers)),
		"payload": map[string]any{"seq": seq, "kind": "bench"}})
	return b
}

// triggerHTTP sends event seq and returns its transactionId.
func (s *server) triggerHTTP(seq int64) (string, error) {
	status, body, err := s.do(http.MethodPost, "/v1/events/trigger", triggerBody(seq))
	if err != nil {
		return "", err
	}
	if status != http.StatusCreated {
		return "", fmt.Errorf("trigger: %d %s", status, body)
	}
	var out struct {
		TransactionID string `json:"transactionId"`
	}
	err = json.Unmarshal(body, &out)
	return out.TransactionID, err
}

// triggerStore runs event seq through store.Trigger directly, as the handler
// would after its workflow and integration look-ups, wakes the workers, and
// returns the notification's id.
func (s *server) triggerStore(ctx context.Context, wf store.Workflow, seq int64) (string, error) {
	payload, _ := json.Marshal(map[string]any{"seq": seq, "kind": "bench"})
	res, err := s.db.Trigger(ctx, &store.TriggerParams{
		Scope: s.scope, Workflow: wf, TransactionID: id.New(), Payload: payload, Tags: wf.Tags, Now: time.Now(),
		Recipients:  []store.Recipient{{SubscriberID: seed.SubscriberID(int(seq % triggerSubscribers))}},
		ProviderFor: func(string) string { return "svc" },
	})
	if err != nil {
		return "", err
	}
	s.eng.Wake()
	return res.Notifications[0].ID, nil
}

// BenchmarkTriggerToFeed measures, one event at a time with the engine
// running, the time from sending a trigger until the subscriber's feed shows
// its message (p50-ms/p99-ms; the feed is read back to back, each read
// about a feed request's time apart), and the trigger request alone
// (trigger-p50-ms). Beside it, store-p50-ms/store-p99-ms: the same path
// without HTTP (store.Trigger, then the message polled for in SQL).
func BenchmarkTriggerToFeed(b *testing.B) {
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			s, wf := newTriggerServer(b, kind)
			s.startEngine()
			var seq atomic.Int64
			b.Run("http", func(b *testing.B) {
				ctx := context.Background()
				var lat, trig, storeLat bench.Latencies
				polls := 0
				b.ResetTimer()
				for range b.N {
					n := seq.Add(1)
					sub := seed.SubscriberID(int(n % triggerSubscribers))
					start := time.Now()
					tx, err := s.triggerHTTP(n)
					if err != nil {
						b.Fatal(err)
					}
					trig.Add(time.Since(start))
					for {
						polls++
						p, _, err := s.feedHTTP(sub, 0, 1)
						if err != nil {
							b.Fatal(err)
						}
						if len(p.Data) > 0 && p.Data[0].TransactionID == tx {
							break
						}
						if time.Since(start) > 30*time.Second {
							b.Fatalf("the message of %s never reached the feed", tx)
						}
					}
					lat.Add(time.Since(start))

					b.StopTimer()
					n = seq.Add(1)
					start = time.Now()
					nid, err := s.triggerStore(ctx, wf, n)
					if err != nil {
						b.Fatal(err)
					}
					for s.count(b, "SELECT count(*) FROM messages WHERE notification_id = $1", nid) == 0 {
						if time.Since(start) > 30*time.Second {
							b.Fatalf("the message of notification %s was never created", nid)
						}
					}
					storeLat.Add(time.Since(start))
					b.StartTimer()
				}
				b.StopTimer()
				b.ReportMetric(bench.Milliseconds(lat.Percentile(50)), "p50-ms")
				b.ReportMetric(bench.Milliseconds(lat.Percentile(99)), "p99-ms")
				b.ReportMetric(bench.Milliseconds(trig.Percentile(50)), "trigger-p50-ms")
				b.ReportMetric(bench.Milliseconds(storeLat.Percentile(50)), "store-p50-ms")
				b.ReportMetric(bench.Milliseconds(storeLat.Percentile(99)), "store-p99-ms")
				b.ReportMetric(float64(polls)/float64(b.N), "polls/op")
			})
		})
	}
}

// BenchmarkTrigger sends b.N triggers of the one-step in_app workflow over
// HTTP from HERALD_BENCH_CLIENTS concurrent clients with the engine running,
// as under `herald serve`: triggers/s is the sustained rate, p50-ms/p99-ms
// the request latencies, backlog the jobs still unfinished when the last
// trigger was answered, msgs/s the rate at which messages came out (b.N over
// the time from the first trigger until the last message). Then, beside it,
// the same b.N events through store.Trigger directly with the same
// concurrency (store-triggers/s, store-msgs/s), and x-store the ratio of the
// two trigger rates.
func BenchmarkTrigger(b *testing.B) {
	clients := envInt(b, "HERALD_BENCH_CLIENTS", 16)
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			s, wf := newTriggerServer(b, kind)
			s.startEngine()
			var seq atomic.Int64
			b.Run("in_app", func(b *testing.B) {
				ctx := context.Background()
				var lat, storeLat bench.Latencies
				rate, msgs, backlog := s.sendConcurrently(b, clients, true, &lat, func() error {
					_, err := s.triggerHTTP(seq.Add(1))
					return err
				})
				storeRate, storeMsgs, _ := s.sendConcurrently(b, clients, false, &storeLat, func() error {
					_, err := s.triggerStore(ctx, wf, seq.Add(1))
					return err
				})
				b.ReportMetric(rate, "triggers/s")
				b.ReportMetric(bench.Milliseconds(lat.Percentile(50)), "p50-ms")
				b.ReportMetric(bench.Milliseconds(lat.Percentile(99)), "p99-ms")
				b.ReportMetric(float64(backlog), "backlog")
				b.ReportMetric(msgs, "msgs/s")
				b.ReportMetric(storeRate, "store-triggers/s")
				b.ReportMetric(storeMsgs, "store-msgs/s")
				b.ReportMetric(storeRate/rate, "x-store")
			})
		})
	}
}

// sendConcurrently calls send b.N times from clients goroutines (under the
// benchmark timer when timed), then waits until every message is created.
// It returns the send rate, the message rate and the jobs unfinished when
// the last send returned.
func (s *server) sendConcurrently(b *testing.B, clients int, timed bool, lat *bench.Latencies, send func() error) (rate, msgs float64, backlog int) {
	b.StopTimer()
	before := s.count(b, "SELECT count(*) FROM messages")
	if timed {
		b.StartTimer()
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				t0 := time.Now()
				if err := send(); err != nil {
					b.Error(err)
					return
				}
				lat.Add(time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	backlog = s.unfinished(b)
	done := s.waitDrained(b, 5*time.Minute)
	if got := s.count(b, "SELECT count(*) FROM messages") - before; got != b.N {
		b.Fatalf("%d events made %d messages", b.N, got)
	}
	return float64(b.N) / elapsed.Seconds(), float64(b.N) / done.Sub(start).Seconds(), backlog
}

// BenchmarkDrain queues b.N one-step in_app jobs with the engine stopped,
// then starts it: msgs/s is how fast its workers (2, as under `herald
// serve`) turn them into messages, nothing else running.
func BenchmarkDrain(b *testing.B) {
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			s, wf := newTriggerServer(b, kind)
			var seq atomic.Int64
			b.Run("in_app", func(b *testing.B) {
				ctx := context.Background()
				b.StopTimer()
				var wg sync.WaitGroup
				var left atomic.Int64
				left.Store(int64(b.N))
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for left.Add(-1) >= 0 {
							if _, err := s.triggerStore(ctx, wf, seq.Add(1)); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StartTimer()
				start := time.Now()
				s.startEngine()
				done := s.waitDrained(b, 10*time.Minute)
				b.StopTimer()
				s.stopEngine()
				b.ReportMetric(float64(b.N)/done.Sub(start).Seconds(), "msgs/s")
			})
		})
	}
}
