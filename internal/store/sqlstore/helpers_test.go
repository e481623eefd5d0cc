// Package sqlstore_test is the store conformance suite: every test runs
// against a fresh SQLite file and a fresh PostgreSQL schema (testdb.ForEach),
// so the two dialects are held to one behaviour.
package sqlstore_test

import (
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
)

// base is the suite's fixed "now": far from any real clock, so tests that
// depend on time never depend on the machine's.
var base = time.Date(2031, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

// clock is a settable clock for the store calls, safe to read from many
// goroutines.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// tenant is a bootstrapped store: one organization with environments A and B.
type tenant struct {
	Org   store.Organization
	Owner store.Member
	EnvA  store.Environment
	EnvB  store.Environment
	A, B  store.Scope
	Clock *clock
}

// setup bootstraps db with one organization and two environments, with a
// clock at base for the tests' store calls.
func setup(t *testing.T, db *sqlstore.DB) *tenant {
	t.Helper()
	c := &clock{t: base}
	org := store.Organization{ID: id.NewAt(base), Name: "Org", CreatedAt: base}
	tn := &tenant{
		Org:   org,
		Owner: store.Member{ID: id.NewAt(base), OrganizationID: org.ID, Email: "owner@example.com", Role: "owner", CreatedAt: base},
		EnvA:  store.Environment{ID: id.NewAt(base), OrganizationID: org.ID, Name: "development", CreatedAt: base},
		EnvB:  store.Environment{ID: id.NewAt(base), OrganizationID: org.ID, Name: "production", CreatedAt: base.Add(time.Millisecond)},
		Clock: c,
	}
	tn.A = store.Scope{OrganizationID: org.ID, EnvironmentID: tn.EnvA.ID}
	tn.B = store.Scope{OrganizationID: org.ID, EnvironmentID: tn.EnvB.ID}
	p := &store.BootstrapParams{Organization: org, Owner: tn.Owner, Environments: []store.Environment{tn.EnvA, tn.EnvB}}
	created, err := db.Bootstrap(t.Context(), p)
	require.NoError(t, err)
	require.True(t, created)
	tn.EnvA, tn.EnvB = p.Environments[0], p.Environments[1] // with the application identifiers the store made
	return tn
}

// otherOrganization adds a second organization with one environment by raw
// SQL (Bootstrap only ever creates the first) and returns its scope.
func otherOrganization(t *testing.T, db *sqlstore.DB) store.Scope {
	t.Helper()
	s := store.Scope{OrganizationID: id.New(), EnvironmentID: id.New()}
	exec(t, db, "INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)", s.OrganizationID, "Other", base.UnixMilli())
	exec(t, db, "INSERT INTO environments (id, organization_id, name, created_at) VALUES ($1, $2, $3, $4)",
		s.EnvironmentID, s.OrganizationID, "development", base.UnixMilli())
	return s
}

func exec(t *testing.T, db *sqlstore.DB, q string, a ...any) {
	t.Helper()
	_, err := db.Writer().ExecContext(t.Context(), q, a...)
	require.NoError(t, err)
}

// count runs a SELECT count(*) … with raw SQL on the reader pool.
func count(t *testing.T, db *sqlstore.DB, q string, a ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.Reader().QueryRowContext(t.Context(), q, a...).Scan(&n))
	return n
}

// rawString reads one text column with raw SQL.
func rawString(t *testing.T, db *sqlstore.DB, q string, a ...any) string {
	t.Helper()
	var s sql.NullString
	require.NoError(t, db.Reader().QueryRowContext(t.Context(), q, a...).Scan(&s))
	return s.String
}

func ptr[T any](v T) *T { return &v }

func set(v string) store.Field { return store.Field{Set: true, Value: &v} }

var null = store.Field{Set: true}

func upsert(t *testing.T, db *sqlstore.DB, p store.SubscriberUpsertParams) (store.Subscriber, bool) {
	t.Helper()
	s, created, err := db.SubscriberUpsert(t.Context(), &p)
	require.NoError(t, err)
	return s, created
}

// parallel runs fn n times at once and returns each call's error.
func parallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}
