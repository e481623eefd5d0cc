package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/bench"
	"github.com/herald-notify/herald/internal/seed"
)

// listSQL runs the statements sqlstore.InboxList runs for a first page (the
// snooze probe, then the page with the state conditions of where) and
// returns the ids.
func (in *inbox) listSQL(ctx context.Context, subscriberID string, unread bool, limit int) ([]string, error) {
	if err := in.settleSQL(ctx, subscriberID); err != nil {
		return nil, err
	}
	where, args := in.where(), []any{subscriberID, in.scope.EnvironmentID}
	if unread {
		where += " AND read = $3 AND archived = $4 AND snoozed_until IS NULL"
		args = append(args, false, false)
	}
	rows, err := in.db.Reader().QueryContext(ctx, "SELECT "+messageColumns+" FROM messages WHERE "+where+
		fmt.Sprintf(" ORDER BY created_at DESC, id DESC LIMIT $%d OFFSET $%d", len(args)+1, len(args)+2),
		append(args, limit+1, 0)...)
	if err != nil {
		return nil, err
	}
	ids, err := scanIDs(rows)
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids, err
}

// countFilters are the count benchmark's filters: of state, as an inbox
// asks them (its unread badge and tabs), and with tags, both answered by
// the counters; with data, counted in one pass over the inbox.
var countFilters = map[string]string{
	"state": `[{"read":false,"archived":false,"snoozed":false},{"seen":false,"archived":false,"snoozed":false},` +
		`{"archived":true},{"snoozed":true},{"severity":"high","read":false,"archived":false,"snoozed":false}]`,
	"tags": `[{"tags":["billing"],"read":false,"archived":false,"snoozed":false},{"tags":["social"]}]`,
	"data": `[{"data":"{\"kind\":\"k1\"}"},{"data":"{\"kind\":\"k2\"}","read":false}]`,
}

// countSQL runs the statements sqlstore.InboxCount runs for the filters of
// countFilters[kind] and returns the counts.
func (in *inbox) countSQL(ctx context.Context, subscriberID, kind string) ([]int, error) {
	if err := in.settleSQL(ctx, subscriberID); err != nil {
		return nil, err
	}
	sum := func(c [64]int, match func(code int) bool) int {
		n := 0
		for code, v := range c {
			if match(code) {
				n += v
			}
		}
		return n
	}
	active := func(code int) bool { return code&(4|8) == 0 }
	unread := func(k int) bool { return active(k) && k&1 == 0 }
	switch kind {
	case "state":
		c, _, err := in.countsSQL(ctx, subscriberID, "")
		return []int{sum(c, unread), sum(c, func(k int) bool { return active(k) && k&2 == 0 }),
			sum(c, func(k int) bool { return k&4 != 0 }), sum(c, func(k int) bool { return k&8 != 0 }),
			sum(c, func(k int) bool { return unread(k) && k>>4 == 3 })}, err
	case "tags":
		_, billing, err := in.countsSQL(ctx, subscriberID, "billing")
		if err != nil {
			return nil, err
		}
		_, social, err := in.countsSQL(ctx, subscriberID, "social")
		return []int{sum(billing, unread), sum(social, func(int) bool { return true })}, err
	}
	data := "CAST(data AS jsonb) #> ARRAY[$3]::text[] = $%d::jsonb"
	args := []any{subscriberID, in.scope.EnvironmentID, "kind", `"k1"`, "kind", `"k2"`, false}
	if in.kind == "sqlite" {
		data = "(json_type(data, $3) = 'text' AND data ->> $3 = $%d)"
		args = []any{subscriberID, in.scope.EnvironmentID, `$."kind"`, "k1", `$."kind"`, "k2", false}
	}
	out := make([]int, 2)
	err := in.db.Reader().QueryRowContext(ctx, "SELECT coalesce(sum(CASE WHEN true AND "+fmt.Sprintf(data, 4)+
		" THEN 1 ELSE 0 END), 0), coalesce(sum(CASE WHEN true AND read = $7 AND "+strings.ReplaceAll(fmt.Sprintf(data, 6), "$3", "$5")+
		" THEN 1 ELSE 0 END), 0) FROM messages WHERE "+in.where(), args...).Scan(&out[0], &out[1])
	return out, err
}

// BenchmarkInboxState measures, on the seeded inbox dataset (messages with
// severities, tags, data, archives and snoozes), a v2 list page (10) of a
// typical subscriber and of the large inbox, unfiltered and unread only,
// and the count of five state filters, of two by tags and of two by data,
// over HTTP and beside it the store's SQL of the same call, in turn first:
// p50-ms/p99-ms are the HTTP latencies, sql-p50-ms/sql-p99-ms the SQL's.
func BenchmarkInboxState(b *testing.B) {
	subscribers := envInt(b, "HERALD_BENCH_INBOX_SUBSCRIBERS", 10_000)
	messages := envInt(b, "HERALD_BENCH_INBOX_MESSAGES", 100_000)
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			in := openInbox(b, kind, inboxLocation(kind), subscribers, messages)
			typical := func(r *rand.Rand) int { return 1 + r.IntN(subscribers-1) }
			large := func(*rand.Rand) int { return seed.HotSubscriber }
			for _, c := range []struct {
				name   string
				pick   func(*rand.Rand) int
				unread bool
			}{{"list/typical", typical, false}, {"list/large-inbox", large, false}, {"list/large-inbox-unread", large, true}} {
				b.Run(c.name, func(b *testing.B) { in.benchList(b, c.pick, c.unread) })
			}
			for _, kind := range []string{"state", "tags", "data"} {
				b.Run("count-"+kind+"/typical", func(b *testing.B) { in.benchCount(b, typical, kind) })
				b.Run("count-"+kind+"/large-inbox", func(b *testing.B) { in.benchCount(b, large, kind) })
			}
		})
	}
}

// benchList reads b.N first pages of the v2 list over HTTP and as SQL.
func (in *inbox) benchList(b *testing.B, pick func(*rand.Rand) int, unread bool) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(uint64(b.N), 9))
	var httpLat, sqlLat bench.Latencies
	q := url.Values{"limit": {"10"}}
	if unread {
		q = url.Values{"limit": {"10"}, "read": {"false"}, "archived": {"false"}, "snoozed": {"false"}}
	}
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		k := pick(r)
		var got []string
		viaHTTP := func() {
			var page struct {
				Data []struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			took := in.timedGet(b, "/v2/subscribers/"+url.PathEscape(seed.SubscriberID(k))+"/notifications?"+q.Encode(), &page)
			httpLat.Add(took)
			got = got[:0]
			for _, d := range page.Data {
				got = append(got, d.ID)
			}
		}
		var want []string
		viaSQL := func() {
			start := time.Now()
			var err error
			if want, err = in.listSQL(ctx, in.gen.Subscriber(k).ID, unread, 10); err != nil {
				b.Fatal(err)
			}
			sqlLat.Add(time.Since(start))
		}
		inTurn(i, viaHTTP, viaSQL)
		if !slices.Equal(got, want) {
			b.Fatalf("subscriber %d: HTTP %v, SQL %v", k, got, want)
		}
	}
	report(b, &httpLat, &sqlLat)
}

// benchCount counts b.N times over HTTP and as SQL; total is the mean of
// the first count.
func (in *inbox) benchCount(b *testing.B, pick func(*rand.Rand) int, kind string) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(uint64(b.N), 10))
	var httpLat, sqlLat bench.Latencies
	total := 0
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		k := pick(r)
		var got []int
		viaHTTP := func() {
			var counts []struct {
				Count int `json:"count"`
			}
			took := in.timedGet(b, "/v2/subscribers/"+url.PathEscape(seed.SubscriberID(k))+"/notifications/count?filters="+
				url.QueryEscape(countFilters[kind]), &counts)
			httpLat.Add(took)
			got = got[:0]
			for _, c := range counts {
				got = append(got, c.Count)
			}
		}
		var want []int
		viaSQL := func() {
			start := time.Now()
			var err error
			if want, err = in.countSQL(ctx, in.gen.Subscriber(k).ID, kind); err != nil {
				b.Fatal(err)
			}
			sqlLat.Add(time.Since(start))
		}
		inTurn(i, viaHTTP, viaSQL)
		if !slices.Equal(got, want) {
			b.Fatalf("subscriber %d: HTTP %v, SQL %v", k, got, want)
		}
		total += got[0]
	}
	report(b, &httpLat, &sqlLat)
	b.ReportMetric(float64(total)/float64(b.N), "total")
}

// timedGet GETs path into out with the benchmark's timer running and
// returns the call's latency.
func (in *inbox) timedGet(b *testing.B, path string, out any) time.Duration {
	b.StartTimer()
	start := time.Now()
	status, body, err := in.do(http.MethodGet, path, nil)
	took := time.Since(start)
	b.StopTimer()
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("%d %s", status, strings.TrimSpace(string(body)))
	}
	if err == nil {
		err = json.Unmarshal(body, out)
	}
	if err != nil {
		b.Fatalf("GET %s: %v", path, err)
	}
	return took
}
