package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/seed"
	"github.com/herald-notify/herald/internal/store"
)

// search is one subscriber search, sent over HTTP or as the SQL the store runs.
type search struct {
	subscriberID, email, name string // filters; "" is absent
	after                     string // _id of the last row of the previous page
	cursor                    string // the API's opaque cursor for the same position
	limit                     int
}

func (q search) path() string {
	v := url.Values{}
	for _, p := range []struct{ k, v string }{{"subscriberId", q.subscriberID}, {"email", q.email}, {"name", q.name}, {"after", q.cursor}} {
		if p.v != "" {
			v.Set(p.k, p.v)
		}
	}
	v.Set("limit", strconv.Itoa(q.limit))
	return "/v2/subscribers?" + v.Encode()
}

// subscriberColumns are the columns the store reads for a search.
const subscriberColumns = "id, organization_id, environment_id, subscriber_id, first_name, last_name, email, phone, avatar," +
	" locale, timezone, data, channels, is_online, last_online_at, version, deleted, created_at, updated_at"

// sql returns the statements sqlstore.SubscriberSearch runs for q (default
// order: _id descending): the page, then the count up to the cap.
func (q search) sql(dialect string, env string) (page string, pageArgs []any, count string, countArgs []any) {
	args := []any{env}
	where := []string{"environment_id = $1", "deleted = false"}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if q.subscriberID != "" {
		add("subscriber_id = ?", q.subscriberID)
	}
	substring := func(col, v string) {
		if dialect == "postgres" {
			esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(v)
			add(col+` LIKE ? ESCAPE '\'`, "%"+esc+"%")
		} else {
			add("instr("+col+", ?) > 0", v)
		}
	}
	if words := enclosedWords(q.email); dialect == "postgres" && len(words) > 0 {
		args = append(args, words)
		add("(regexp_split_to_array(email, '[^A-Za-z0-9]+') @> $"+strconv.Itoa(len(args))+"::text[] AND strpos(email, ?) > 0)", q.email)
	} else if q.email != "" {
		substring("email", q.email)
	}
	if q.name != "" {
		substring("(coalesce(first_name, '') || ' ' || coalesce(last_name, ''))", q.name)
	}
	filter, filterArgs := strings.Join(where, " AND "), append([]any(nil), args...)
	if q.after != "" {
		add("id < ?", q.after)
	}
	args = append(args, q.limit+1)
	page = "SELECT " + subscriberColumns + " FROM subscribers WHERE " + strings.Join(where, " AND ") +
		" ORDER BY id DESC LIMIT $" + strconv.Itoa(len(args))
	count = "SELECT count(*) FROM (SELECT 1 FROM subscribers WHERE " + filter +
		fmt.Sprintf(" LIMIT %d) t", store.TotalCountCap+1)
	return page, args, count, filterArgs
}

// runSQL runs q's statements directly on the store's read pool, as the store
// would: the count only when the page is not the whole result. It returns
// the _ids of the page.
func (f *fixture) runSQL(ctx context.Context, q search) ([]string, error) {
	page, pageArgs, count, countArgs := q.sql(f.db.Dialect(), f.dev.EnvironmentID)
	rows, err := f.db.Reader().QueryContext(ctx, page, pageArgs...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	cols := make([]any, 19)
	ptrs := make([]any, len(cols))
	for i := range cols {
		ptrs[i] = &cols[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		ids = append(ids, fmt.Sprint(cols[0]))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) > q.limit || q.after != "" {
		var n int
		if err := f.db.Reader().QueryRowContext(ctx, count, countArgs...).Scan(&n); err != nil {
			return nil, err
		}
	}
	return ids[:min(len(ids), q.limit)], nil
}

// enclosedWords is sqlstore's: the words (runs of ASCII letters and digits)
// with another character on both sides within v, which the PostgreSQL store
// looks up in its e-mail words index.
func enclosedWords(v string) []string {
	var words []string
	start := -1
	for i := 0; i <= len(v); i++ {
		if i < len(v) && (v[i] >= 'a' && v[i] <= 'z' || v[i] >= 'A' && v[i] <= 'Z' || v[i] >= '0' && v[i] <= '9') {
			if start < 0 {
				start = i
			}
			continue
		}
		if start > 0 && i < len(v) {
			words = append(words, v[start:i])
		}
		start = -1
	}
	return words
}

// page is the part of a search response the benchmarks look at.
type page struct {
	Data []struct {
		ID string `json:"_id"`
	} `json:"data"`
	Next       *string `json:"next"`
	TotalCount int     `json:"totalCount"`
}

// runHTTP sends q and returns the decoded page and how long the request took.
func (f *fixture) runHTTP(q search) (page, time.Duration, error) {
	var p page
	start := time.Now()
	status, body, err := f.do(http.MethodGet, q.path(), f.devKey, nil)
	took := time.Since(start)
	if err != nil {
		return p, took, err
	}
	if status != http.StatusOK {
		return p, took, fmt.Errorf("GET %s: %d %s", q.path(), status, body)
	}
	return p, took, json.Unmarshal(body, &p)
}

// lastNames are the seeded last names of three characters or more.
var lastNames = slices.DeleteFunc(seed.LastNames(), func(n string) bool { return utf8.RuneCountInString(n) < 3 })

// queries make the i-th search of a benchmark from its random source.
var queries = []struct {
	name string
	make func(f *fixture, r *rand.Rand) search
}{
	{"subscriberId", func(f *fixture, r *rand.Rand) search {
		return search{subscriberID: seed.SubscriberID(r.IntN(f.n)), limit: 10}
	}},
	{"email", func(f *fixture, r *rand.Rand) search {
		return search{email: *f.gen.Subscriber(r.IntN(f.n)).Email, limit: 10}
	}},
	// A part of an address someone remembers: the end of the last name and
	// the first digits of the number ("anchi.1234"), a handful of matches.
	{"emailSubstring", func(f *fixture, r *rand.Rand) search {
		e := *f.gen.Subscriber(r.IntN(f.n)).Email
		_, rest, _ := strings.Cut(e, ".")
		last, num, _ := strings.Cut(rest, ".")
		num, _, _ = strings.Cut(num, "@")
		return search{email: last[len(last)/3:] + "." + num[:min(4, len(num))], limit: 10}
	}},
	// A last name: about 1% of the subscribers. Names of one or two
	// characters ("Li") are left out: no trigram index serves them, and
	// their search scans the table (docs/benchmarks.md has the figure).
	{"nameSubstring", func(f *fixture, r *rand.Rand) search {
		return search{name: lastNames[r.IntN(len(lastNames))], limit: 10}
	}},
	// A whole domain: one subscriber in twelve, more than the count cap at 1M.
	{"emailDomain", func(f *fixture, r *rand.Rand) search {
		return search{email: "@" + []string{"acme.test", "globex.test", "hooli.test", "wayne.test"}[r.IntN(4)], limit: 10}
	}},
}

// BenchmarkSearch measures each kind of search over HTTP and, beside it, the
// same SQL run directly: p50-ms/p99-ms are the HTTP latencies, sql-p50-ms/
// sql-p99-ms the baseline's, x-p50 the ratio of the medians, rows the mean
// totalCount. ns/op is the mean HTTP request.
func BenchmarkSearch(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			f := getFixture(b, kind)
			for _, q := range queries {
				b.Run(q.name, func(b *testing.B) {
					r := rand.New(rand.NewPCG(uint64(b.N), 42))
					benchSearches(b, f, func() search { return q.make(f, r) }, nil)
				})
			}
			b.Run("paging", func(b *testing.B) { benchPaging(b, f) })
		})
	}
}

// benchSearches sends b.N searches made by next over HTTP, then runs the
// same searches again as SQL, and reports the figures. The SQL goes second
// and in a separate pass, so each side meets the caches the other left in the
// same state (one right after the other would favour the second). after, when
// set, sees each HTTP page.
func benchSearches(b *testing.B, f *fixture, next func() search, after func(search, page)) {
	ctx := context.Background()
	var httpLat, sqlLat Latencies
	var rows int
	sent := make([]search, 0, b.N)
	pages := make([]int, 0, b.N)
	b.ResetTimer()
	for range b.N {
		q := next()
		p, took, err := f.runHTTP(q)
		if err != nil {
			b.Fatal(err)
		}
		httpLat.Add(took)
		rows += p.TotalCount
		sent, pages = append(sent, q), append(pages, len(p.Data))
		if after != nil {
			after(q, p)
		}
	}
	b.StopTimer()
	for i, q := range sent {
		start := time.Now()
		ids, err := f.runSQL(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		sqlLat.Add(time.Since(start))
		if len(ids) != pages[i] {
			b.Fatalf("%s: HTTP returned %d rows, SQL %d", q.path(), pages[i], len(ids))
		}
	}
	report(b, &httpLat, &sqlLat)
	b.ReportMetric(float64(rows)/float64(b.N), "rows")
}

// benchPaging follows `next` through the default listing (_id descending),
// 100 subscribers a page, from the first page on.
func benchPaging(b *testing.B, f *fixture) {
	var cur search
	first := search{limit: 100}
	cur = first
	benchSearches(b, f, func() search { return cur }, func(q search, p page) {
		if p.Next == nil || len(p.Data) == 0 {
			cur = first
			return
		}
		cur = search{limit: 100, cursor: *p.Next, after: p.Data[len(p.Data)-1].ID}
	})
}

// report prints the HTTP and SQL percentiles and their ratio.
func report(b *testing.B, httpLat, sqlLat *Latencies) {
	h50, h99 := httpLat.Percentile(50), httpLat.Percentile(99)
	s50, s99 := sqlLat.Percentile(50), sqlLat.Percentile(99)
	b.ReportMetric(Milliseconds(h50), "p50-ms")
	b.ReportMetric(Milliseconds(h99), "p99-ms")
	b.ReportMetric(Milliseconds(s50), "sql-p50-ms")
	b.ReportMetric(Milliseconds(s99), "sql-p99-ms")
	if s50 > 0 {
		b.ReportMetric(float64(h50)/float64(s50), "x-p50")
	}
}
