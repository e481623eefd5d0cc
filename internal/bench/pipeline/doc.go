// Package pipeline holds the benchmarks of Herald's trigger pipeline and
// inbox: Go benchmarks that drive the real HTTP handler (httpapi.New on an
// httptest server) with a running engine.Engine, as `herald serve` does, on
// each store, and print figures with b.ReportMetric beside the same work done
// directly on the store or in SQL, the baseline the HTTP figure is compared to.
//
//	BenchmarkTriggerToFeed  trigger → message visible in the feed, p50/p99
//	BenchmarkTrigger        sustained triggers/s over HTTP with concurrent
//	                        clients, beside store.Trigger called directly
//	BenchmarkDrain          how fast the workers turn queued jobs into messages
//	BenchmarkInbox          feed page and mark-as (10 ids) p99 on a large
//	                        seeded inbox, beside the SQL the store runs
//	BenchmarkInboxState     v2 list page and counts (state, tags, data
//	                        filters) on the same dataset, beside their SQL
//	BenchmarkDigest         N subscribers × 10 events into 1-minute digests on
//	                        the real clock: digests, merges, lateness
//
// Run them with, for example,
//
//	go test ./internal/bench/pipeline -run '^$' -bench . -timeout 0
//
// Environment:
//
//	HERALD_BENCH_CLIENTS               concurrent HTTP clients of BenchmarkTrigger (default 16)
//	HERALD_BENCH_INBOX_SUBSCRIBERS     subscribers of the inbox dataset (default 10000)
//	HERALD_BENCH_INBOX_MESSAGES        messages of the inbox dataset (default 100000), with
//	                                   severities, tags, data, archives and snoozes
//	HERALD_BENCH_INBOX_HOT_EVERY       every n-th message goes to subscriber 0, the large
//	                                   inbox (default 100)
//	HERALD_BENCH_INBOX_DATABASE_URL    a PostgreSQL database for the inbox dataset, seeded on
//	                                   first use and reused afterwards (default: a fresh schema
//	                                   on HERALD_TEST_DATABASE_URL, dropped at the end)
//	HERALD_BENCH_INBOX_SQLITE_PATH     the same for SQLite (default: a temporary file)
//	HERALD_BENCH_DIGEST_SUBSCRIBERS    subscribers of BenchmarkDigest (default 1000)
//
// The other benchmarks use fresh stores: a temporary SQLite file and a fresh
// schema on HERALD_TEST_DATABASE_URL; PostgreSQL ones skip when no server answers.
package pipeline
