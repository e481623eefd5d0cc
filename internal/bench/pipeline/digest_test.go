package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/bench"
	"github.com/herald-notify/herald/internal/seed"
)

// Shape of BenchmarkDigest: each subscriber gets digestEvents events, sent
// as triggers to digestChunk subscribers at once.
const (
	digestEvents = 10
	digestChunk  = 100
	digestWindow = time.Minute
)

// BenchmarkDigest sends HERALD_BENCH_DIGEST_SUBSCRIBERS subscribers 10
// events each of a workflow whose digest step (regular, 1 minute) is
// followed by an in_app step, with the engine running on the real clock, and
// waits until every window has closed and its message is out. It reports
// digests (messages: one per subscriber expected), merged (merged digest
// jobs: 9 per subscriber expected), events (events the messages counted),
// split (subscribers whose events went into more than one digest),
// late-p50-ms/late-p99-ms/late-max-ms (message created_at minus the digest
// job's run_at, the end of its window), events/s (the trigger phase) and
// joined-s (seconds from the first trigger until the last merge: the windows
// are only whole when it stays under 60). One iteration takes over a minute:
// run it with -benchtime 1x.
func BenchmarkDigest(b *testing.B) {
	n := envInt(b, "HERALD_BENCH_DIGEST_SUBSCRIBERS", 1000)
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			for range b.N {
				runDigest(b, kind, n)
			}
		})
	}
}

func runDigest(b *testing.B, kind string, n int) {
	b.StopTimer()
	s := newServer(b, kind, openStore(b, kind, ""), n)
	s.createWorkflow(b, "bench-digest", []map[string]any{
		{"name": "batch", "type": "digest", "controlValues": map[string]any{"type": "regular", "amount": 1, "unit": "minutes"}},
		inAppStep("{{step.total_count}} new events"),
	})
	s.startEngine()
	defer s.stopEngine()
	b.StartTimer()

	// Clients take chunks of subscribers and send each chunk its events
	// back to back, so one subscriber's events are milliseconds apart.
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				first := int(next.Add(1)-1) * digestChunk
				if first >= n {
					return
				}
				to := make([]string, 0, digestChunk)
				for k := first; k < min(first+digestChunk, n); k++ {
					to = append(to, seed.SubscriberID(k))
				}
				for e := range digestEvents {
					body := fmt.Appendf(nil, `{"name":"bench-digest","to":["%s"],"payload":{"event":%d}}`,
						strings.Join(to, `","`), e)
					status, resp, err := s.do(http.MethodPost, "/v1/events/trigger", body)
					if err != nil || status != http.StatusCreated {
						b.Errorf("trigger: %d %s %v", status, resp, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	sent := time.Since(start)
	s.waitDrained(b, digestWindow+10*sent+5*time.Minute)
	b.StopTimer()

	ctx := context.Background()
	var late bench.Latencies
	rows, err := s.db.Reader().QueryContext(ctx, "SELECT m.content, m.created_at - j.run_at FROM messages m"+
		" JOIN jobs j ON j.notification_id = m.notification_id AND j.type = 'digest'")
	if err != nil {
		b.Fatal(err)
	}
	digests, events := 0, 0
	for rows.Next() {
		var content string
		var ms int64
		if err := rows.Scan(&content, &ms); err != nil {
			b.Fatal(err)
		}
		digests++
		count, _, _ := strings.Cut(content, " ")
		c, err := strconv.Atoi(count)
		if err != nil {
			b.Fatalf("message %q does not start with its event count", content)
		}
		events += c
		late.Add(time.Duration(ms) * time.Millisecond)
	}
	if err := rows.Close(); err != nil {
		b.Fatal(err)
	}
	merged := s.count(b, "SELECT count(*) FROM jobs WHERE status = 'merged'")
	split := s.count(b, "SELECT count(*) FROM (SELECT subscriber_id FROM messages GROUP BY subscriber_id HAVING count(*) > 1) x")
	var lastJoin int64
	if err := s.db.Reader().QueryRowContext(ctx, "SELECT coalesce(max(updated_at), 0) FROM jobs WHERE status = 'merged'").
		Scan(&lastJoin); err != nil {
		b.Fatal(err)
	}
	if events != n*digestEvents {
		b.Errorf("%d events sent, %d counted in digests", n*digestEvents, events)
	}
	b.ReportMetric(float64(digests), "digests")
	b.ReportMetric(float64(merged), "merged")
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(split), "split")
	b.ReportMetric(bench.Milliseconds(late.Percentile(50)), "late-p50-ms")
	b.ReportMetric(bench.Milliseconds(late.Percentile(99)), "late-p99-ms")
	b.ReportMetric(bench.Milliseconds(late.Percentile(100)), "late-max-ms")
	b.ReportMetric(float64(n*digestEvents)/sent.Seconds(), "events/s")
	b.ReportMetric(time.UnixMilli(lastJoin).Sub(start).Seconds(), "joined-s")
}
