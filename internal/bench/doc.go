// Package bench holds Herald's performance benchmarks: Go benchmarks that
// drive the real HTTP handler (httpapi.New on an httptest server) against
// each store and print latency percentiles beside the time of the same SQL
// run directly on the database, the baseline the HTTP figure is compared to.
//
// Run them with
//
//	go test ./internal/bench -run '^$' -bench . -benchtime 300x
//
// Environment:
//
//	HERALD_BENCH_SUBSCRIBERS   dataset size (default 20000); a fresh store is
//	                           seeded with package seed when no database is named
//	HERALD_BENCH_DATABASE_URL  a PostgreSQL database seeded by `herald seed`
//	                           (otherwise a fresh schema on HERALD_TEST_DATABASE_URL)
//	HERALD_BENCH_SQLITE_PATH   a SQLite file seeded by `herald seed`
//	                           (otherwise a fresh file in a temporary directory)
//
// A seeded database must hold subscribers 0..HERALD_BENCH_SUBSCRIBERS-1 of
// seed.DefaultSeed in its development environment. The create benchmark
// writes to the production environment and deletes what it wrote.
package bench
