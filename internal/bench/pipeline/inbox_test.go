package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/bench"
	"github.com/herald-notify/herald/internal/seed"
)

// hotEvery sends every 100th seeded message to seed.HotSubscriber (100,000
// of 10,000,000) unless HERALD_BENCH_INBOX_HOT_EVERY says otherwise.
const hotEvery = 100

// inbox is the seeded inbox dataset on one store.
type inbox struct {
	*server
	msgs                  *seed.MessageGenerator
	subscribers, messages int
}

// inboxLocation is the database of the inbox dataset named in the
// environment ("" for a fresh one).
func inboxLocation(kind string) string {
	if kind == "postgres" {
		return os.Getenv("HERALD_BENCH_INBOX_DATABASE_URL")
	}
	return os.Getenv("HERALD_BENCH_INBOX_SQLITE_PATH")
}

// openInbox opens the inbox dataset of kind at loc (see openStore), seeding
// it unless it is there already.
func openInbox(tb testing.TB, kind, loc string, subscribers, messages int) *inbox {
	tb.Helper()
	s := newServer(tb, kind, openStore(tb, kind, loc), subscribers)
	wf := s.createWorkflow(tb, "bench-inbox", []map[string]any{inAppStep("Item {{payload.seq}} is ready")})
	in := &inbox{server: s, msgs: seed.NewMessages(s.gen, subscribers, envInt(tb, "HERALD_BENCH_INBOX_HOT_EVERY", hotEvery), wf.ID, wf.Key),
		subscribers: subscribers, messages: messages}
	in.msgs.States = true
	ctx := context.Background()
	has := func(n int) bool {
		return s.count(tb, "SELECT count(*) FROM messages WHERE id = $1", in.msgs.Message(n).ID) == 1
	}
	if has(messages - 1) {
		return in
	}
	if has(0) {
		tb.Fatalf("the %s inbox dataset is partly seeded or of another size: drop it, or set HERALD_BENCH_INBOX_MESSAGES to its size", kind)
	}
	o := seed.LoadOptions{Count: messages, Batch: 10000}
	if messages >= 100_000 {
		fmt.Fprintf(os.Stderr, "seeding %d messages over %d subscribers into %s\n", messages, subscribers, kind)
		bar := seed.NewProgress(os.Stderr, messages)
		defer bar.Finish()
		o.Progress = bar.Add
	}
	start := time.Now()
	if err := seed.LoadMessages(ctx, in.msgs, s.db.MessageBulkLoad, o); err != nil {
		tb.Fatal(err)
	}
	if messages >= 100_000 {
		fmt.Fprintf(os.Stderr, "\nseeded %d messages in %s\n", messages, time.Since(start).Round(time.Second))
	}
	if kind == "postgres" {
		// Fresh statistics and visibility map, as autovacuum would leave them.
		for _, q := range []string{"VACUUM ANALYZE messages", "VACUUM ANALYZE subscribers"} {
			if _, err := s.db.Writer().ExecContext(ctx, q); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return in
}

// feedPage is the part of a feed response the benchmarks check.
type feedPage struct {
	Data []struct {
		ID            string `json:"_id"`
		TransactionID string `json:"transactionId"`
	} `json:"data"`
	TotalCount int  `json:"totalCount"`
	HasMore    bool `json:"hasMore"`
}

// feedHTTP reads one feed page over HTTP and returns it with its latency.
func (s *server) feedHTTP(subscriber string, page, limit int) (feedPage, time.Duration, error) {
	q := url.Values{"page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(limit)}}
	start := time.Now()
	status, body, err := s.do(http.MethodGet, feedPath(subscriber, q), nil)
	took := time.Since(start)
	var p feedPage
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("feed: %d %s", status, body)
	}
	if err == nil {
		err = json.Unmarshal(body, &p)
	}
	return p, took, err
}

// BenchmarkInbox measures, on the seeded inbox dataset, a feed page (10
// messages) of a typical subscriber, of the large inbox (page 0, and a random
// page of its first 1,000), and mark-as of 10 ids of each, over HTTP and
// beside it the store's SQL of the same call, which of the two goes first
// alternating: p50-ms/p99-ms are the HTTP
// latencies, sql-p50-ms/sql-p99-ms the SQL's, total the mean totalCount.
func BenchmarkInbox(b *testing.B) {
	subscribers := envInt(b, "HERALD_BENCH_INBOX_SUBSCRIBERS", 10_000)
	messages := envInt(b, "HERALD_BENCH_INBOX_MESSAGES", 100_000)
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			in := openInbox(b, kind, inboxLocation(kind), subscribers, messages)
			hot := in.msgs.HotCount(messages)
			typical := func(r *rand.Rand) (int, int) { return 1 + r.IntN(subscribers-1), 0 }
			b.Run("feed/typical", func(b *testing.B) { in.benchFeed(b, typical) })
			b.Run("feed/large-inbox", func(b *testing.B) {
				in.benchFeed(b, func(*rand.Rand) (int, int) { return seed.HotSubscriber, 0 })
			})
			b.Run("feed/large-inbox-deep", func(b *testing.B) {
				in.benchFeed(b, func(r *rand.Rand) (int, int) { return seed.HotSubscriber, r.IntN(min(100, hot/10)) })
			})
			b.Run("mark-as/typical", func(b *testing.B) { in.benchMark(b, typical) })
			b.Run("mark-as/large-inbox", func(b *testing.B) {
				in.benchMark(b, func(r *rand.Rand) (int, int) { return seed.HotSubscriber, r.IntN(max(1, hot/10)) })
			})
		})
	}
}

// benchFeed reads b.N feed pages of the subscribers and pages pick chooses,
// each over HTTP and as SQL, in turn first (the first read of an inbox finds
// its pages colder than the second).
func (in *inbox) benchFeed(b *testing.B, pick func(*rand.Rand) (subscriber, page int)) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(uint64(b.N), 7))
	var httpLat, sqlLat bench.Latencies
	total := 0
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		k, page := pick(r)
		var p feedPage
		viaHTTP := func() {
			b.StartTimer()
			var took time.Duration
			var err error
			p, took, err = in.feedHTTP(seed.SubscriberID(k), page, 10)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			httpLat.Add(took)
			total += p.TotalCount
		}
		var ids []string
		var n int
		viaSQL := func() {
			start := time.Now()
			var err error
			ids, n, err = in.feedSQL(ctx, in.gen.Subscriber(k).ID, page, 10)
			if err != nil {
				b.Fatal(err)
			}
			sqlLat.Add(time.Since(start))
		}
		inTurn(i, viaHTTP, viaSQL)
		if len(ids) != len(p.Data) || n != p.TotalCount {
			b.Fatalf("subscriber %d page %d: HTTP %d rows of %d, SQL %d of %d", k, page, len(p.Data), p.TotalCount, len(ids), n)
		}
	}
	report(b, &httpLat, &sqlLat)
	b.ReportMetric(float64(total)/float64(b.N), "total")
}

// inTurn runs a then b on even i, b then a on odd i.
func inTurn(i int, a, b func()) {
	if i%2 == 1 {
		a, b = b, a
	}
	a()
	b()
}

// benchMark marks 10 messages of the subscribers pick chooses (at the page
// of 10 it chooses) over HTTP and as SQL, in turn first, one marking them
// read and the other unread.
func (in *inbox) benchMark(b *testing.B, pick func(*rand.Rand) (subscriber, page int)) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(uint64(b.N), 8))
	var httpLat, sqlLat bench.Latencies
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		var k int
		var subID string
		var ids []string
		for len(ids) == 0 { // a typical subscriber may have no messages
			var page int
			var err error
			k, page = pick(r)
			subID = in.gen.Subscriber(k).ID
			if ids, _, err = in.feedSQL(ctx, subID, page, 10); err != nil {
				b.Fatal(err)
			}
		}
		mark := []string{"read", "unread"}[i/2%2]
		body, _ := json.Marshal(map[string]any{"messageId": ids, "markAs": mark})
		viaHTTP := func() {
			b.StartTimer()
			start := time.Now()
			status, resp, err := in.do(http.MethodPost, markPath(seed.SubscriberID(k)), body)
			httpLat.Add(time.Since(start))
			b.StopTimer()
			if err != nil || status != http.StatusCreated {
				b.Fatalf("mark-as: %d %s %v", status, resp, err)
			}
		}
		viaSQL := func() {
			start := time.Now()
			changed, err := in.markSQL(ctx, subID, ids, mark != "read")
			sqlLat.Add(time.Since(start))
			if err != nil || len(changed) != len(ids) {
				b.Fatalf("mark-as SQL: %d of %d changed, %v", len(changed), len(ids), err)
			}
		}
		inTurn(i, viaHTTP, viaSQL)
	}
	report(b, &httpLat, &sqlLat)
}

// report prints the HTTP and SQL percentiles and the ratio of the medians.
func report(b *testing.B, httpLat, sqlLat *bench.Latencies) {
	h50, h99 := httpLat.Percentile(50), httpLat.Percentile(99)
	s50, s99 := sqlLat.Percentile(50), sqlLat.Percentile(99)
	b.ReportMetric(bench.Milliseconds(h50), "p50-ms")
	b.ReportMetric(bench.Milliseconds(h99), "p99-ms")
	b.ReportMetric(bench.Milliseconds(s50), "sql-p50-ms")
	b.ReportMetric(bench.Milliseconds(s99), "sql-p99-ms")
	if s50 > 0 {
		b.ReportMetric(float64(h50)/float64(s50), "x-p50")
	}
}
