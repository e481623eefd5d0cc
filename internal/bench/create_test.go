package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/id"
)

// createClients is the number of concurrent clients creating subscribers.
const createClients = 8

// BenchmarkCreate measures POST /v2/subscribers with createClients
// concurrent clients, into the production environment, and beside it the
// store's upsert statement run directly with the same concurrency: req/s
// and sql-req/s are the throughputs, p50-ms/p99-ms and sql-p50-ms/sql-p99-ms
// the latencies. What it writes is deleted afterwards.
func BenchmarkCreate(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			f := getFixture(b, kind)
			run := randomHex(4)
			b.Cleanup(func() { f.deleteCreated(b, run) })

			var httpLat, sqlLat Latencies
			var seq atomic.Int64
			b.SetParallelism(max(1, createClients/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					body := f.createBody(fmt.Sprintf("bench-%s-%d", run, seq.Add(1)))
					t0 := time.Now()
					status, resp, err := f.do(http.MethodPost, "/v2/subscribers", f.prodKey, bytes.NewReader(body))
					httpLat.Add(time.Since(t0))
					if err != nil || status != http.StatusCreated {
						b.Errorf("create: %d %s %v", status, resp, err)
						return
					}
				}
			})
			elapsed := time.Since(start)
			b.StopTimer()

			sqlElapsed := f.createSQL(b, run, b.N, &sqlLat)
			report(b, &httpLat, &sqlLat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(b.N)/sqlElapsed.Seconds(), "sql-req/s")
		})
	}
}

// createBody is the JSON of a realistic new subscriber.
func (f *fixture) createBody(subscriberID string) []byte {
	s := f.gen.Subscriber(int(time.Now().UnixNano() % int64(f.n)))
	b, _ := json.Marshal(map[string]any{
		"subscriberId": subscriberID, "firstName": s.FirstName, "lastName": s.LastName,
		"email": strings.Replace(*s.Email, "@", ".new@", 1), "phone": s.Phone, "locale": s.Locale,
		"timezone": s.Timezone, "data": json.RawMessage(`{"plan":"free","source":"bench"}`),
	})
	return b
}

// createSQL runs n creates as the store's upsert statement, directly on the
// write pool with createClients goroutines, and returns the time they took.
func (f *fixture) createSQL(b *testing.B, run string, n int, lat *Latencies) time.Duration {
	fields := []string{"first_name", "last_name", "email", "phone", "avatar", "locale", "timezone"}
	var sets []string
	for i, c := range fields {
		sets = append(sets, fmt.Sprintf("%s = $%d", c, 8+i))
	}
	q := "INSERT INTO subscribers (id, organization_id, environment_id, subscriber_id, data, channels, version, deleted," +
		" created_at, updated_at, " + strings.Join(fields, ", ") + ") VALUES ($1, $2, $3, $4, $5, '[]', 0, false, $6, $7," +
		" $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (environment_id, subscriber_id) WHERE deleted = false DO UPDATE SET " +
		strings.Join(sets, ", ") + ", data = $5, version = subscribers.version + 1, updated_at = $7 RETURNING " + subscriberColumns

	var seq atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range createClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cols := make([]any, 19)
			ptrs := make([]any, len(cols))
			for i := range cols {
				ptrs[i] = &cols[i]
			}
			for {
				i := seq.Add(1)
				if i > int64(n) {
					return
				}
				s := f.gen.Subscriber(int(i) % f.n)
				now := time.Now().UnixMilli()
				t0 := time.Now()
				err := f.db.Writer().QueryRowContext(context.Background(), q, id.New(), f.prod.OrganizationID, f.prod.EnvironmentID,
					fmt.Sprintf("bench-%s-sql-%d", run, i), `{"plan":"free","source":"bench"}`, now, now,
					s.FirstName, s.LastName, s.Email, s.Phone, s.Avatar, s.Locale, s.Timezone).Scan(ptrs...)
				lat.Add(time.Since(t0))
				if err != nil {
					b.Errorf("create SQL: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// deleteCreated removes the subscribers a create benchmark run wrote. On
// PostgreSQL it also merges the GIN indexes' pending lists (where fresh
// entries wait), which every search would otherwise scan until autovacuum
// gets to them: the search benchmarks that follow should not pay for this one.
func (f *fixture) deleteCreated(b *testing.B, run string) {
	ctx := context.Background()
	if _, err := f.db.Writer().ExecContext(ctx, "DELETE FROM subscribers WHERE environment_id = $1 AND subscriber_id LIKE $2",
		f.prod.EnvironmentID, "bench-"+run+"-%"); err != nil {
		b.Errorf("deleting created subscribers: %v", err)
	}
	if f.kind == "postgres" {
		if _, err := f.db.Writer().ExecContext(ctx, "SELECT gin_clean_pending_list(c.oid) FROM pg_index i"+
			" JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam"+
			" WHERE i.indrelid = 'subscribers'::regclass AND am.amname = 'gin'"); err != nil {
			b.Errorf("cleaning GIN pending lists: %v", err)
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
