package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/herald-notify/herald/internal/store"
)

// Time limits of the PostgreSQL path. A database host that drops off the
// network (or a pooler in between that hangs) leaves connections open and
// silent: no reset, no close, and the kernel of a middlebox may even keep
// acknowledging what is sent, so neither TCP keepalive nor TCP_USER_TIMEOUT
// notices. Only the application's own limits do: every connection attempt,
// statement and transaction of the pool has one, whatever its caller's
// context says (a caller's earlier deadline still wins). A statement cut by
// its limit breaks its connection (pgx closes a connection whose read was
// interrupted), so the pool drops it instead of handing it out again; see
// docs/operations.md, "A database that vanishes".
var pgLimits = struct {
	// Connect bounds opening a connection (TCP, TLS, startup).
	Connect time.Duration
	// Statement bounds one statement, its rows read included.
	Statement time.Duration
	// Tx bounds one transaction from BEGIN to COMMIT.
	Tx time.Duration
	// Reset bounds the check of an idle connection the pool hands out
	// (pgx pings one idle for more than a second).
	Reset time.Duration
}{Connect: 5 * time.Second, Statement: 8 * time.Second, Tx: 20 * time.Second, Reset: 2 * time.Second}

type unlimitedKey struct{}

// withoutLimits lets ctx's statements and transactions run as long as ctx
// allows: migrations, maintenance and secret rotation may take minutes on
// a large store. Their connections still open within pgLimits.Connect.
func withoutLimits(ctx context.Context) context.Context {
	return context.WithValue(ctx, unlimitedKey{}, true)
}

// limit returns ctx bounded by d from now, unless ctx ends sooner or runs
// without limits.
func limit(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if ctx.Value(unlimitedKey{}) != nil {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// limitedConnector opens pgx connections whose every operation has a time
// limit (pgLimits). onTimeout runs, at most once a second, when a limit cut
// an operation short: the database may be gone, and the pool's idle
// connections with it.
type limitedConnector struct {
	inner     driver.Connector
	onTimeout func()
	last      atomic.Int64 // unix nanoseconds of the last onTimeout
}

func (c *limitedConnector) Driver() driver.Driver { return c.inner.Driver() }

func (c *limitedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	lctx, cancel := context.WithTimeout(ctx, pgLimits.Connect) // even without limits
	defer cancel()
	conn, err := c.inner.Connect(lctx)
	if err != nil {
		return nil, c.check(ctx, lctx, err)
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		return conn, nil
	}
	return &limitedConn{Conn: sc, c: c}, nil
}

// check turns err, the error of an operation run under lctx (ctx bounded),
// into one that says the database is unavailable when the limit cut it or
// the connection failed. The caller's own cancellation stays as it is.
func (c *limitedConnector) check(ctx, lctx context.Context, err error) error {
	if err == nil || errors.Is(err, driver.ErrBadConn) && ctx.Err() == nil && lctx.Err() == nil {
		return err // the pool retries on another connection
	}
	if ctx.Err() != nil {
		return err
	}
	if lctx.Err() != nil {
		c.timedOut()
		return fmt.Errorf("%w: no answer within the time limit: %w", store.ErrUnavailable, err)
	}
	if connectionFailed(err) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

func (c *limitedConnector) timedOut() {
	now := time.Now().UnixNano()
	last := c.last.Load()
	if now-last < int64(time.Second) || !c.last.CompareAndSwap(last, now) || c.onTimeout == nil {
		return
	}
	go c.onTimeout() // closing connections may wait on them
}

// connectionFailed reports whether err is the failure of the connection
// rather than of the statement: nothing could be sent or read.
func connectionFailed(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		// The server answered. Class 08 is a connection exception, 57P01–03
		// an administrator shutdown or a server that cannot take connections.
		return len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03")
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return pgconn.Timeout(err)
}

// pgxConn is the pgx connection under a driver connection of the pool
// (sql.Conn.Raw), for what database/sql cannot say (COPY).
func pgxConn(driverConn any) (*stdlib.Conn, bool) {
	switch c := driverConn.(type) {
	case *limitedConn:
		return c.Conn, true
	case *stdlib.Conn:
		return c, true
	}
	return nil, false
}

// limitedConn is a pgx connection of the pool with pgLimits on every
// operation that waits for the server.
type limitedConn struct {
	*stdlib.Conn
	c *limitedConnector
}

func (lc *limitedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	lctx, cancel := limit(ctx, pgLimits.Statement)
	defer cancel()
	res, err := lc.Conn.ExecContext(lctx, query, args)
	return res, lc.c.check(ctx, lctx, err)
}

func (lc *limitedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	lctx, cancel := limit(ctx, pgLimits.Statement)
	rows, err := lc.Conn.QueryContext(lctx, query, args)
	if err != nil {
		cancel()
		return nil, lc.c.check(ctx, lctx, err)
	}
	return wrapRows(rows, lc.c, ctx, lctx, cancel), nil
}

func (lc *limitedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	lctx, cancel := limit(ctx, pgLimits.Statement)
	defer cancel()
	st, err := lc.Conn.PrepareContext(lctx, query)
	if err != nil {
		return nil, lc.c.check(ctx, lctx, err)
	}
	if s, ok := st.(*stdlib.Stmt); ok {
		return &limitedStmt{Stmt: s, c: lc.c}, nil
	}
	return st, nil
}

func (lc *limitedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	// pgx keeps the context of BEGIN for COMMIT and ROLLBACK: the
	// transaction's limit bounds those too.
	lctx, cancel := limit(ctx, pgLimits.Tx)
	tx, err := lc.Conn.BeginTx(lctx, opts)
	if err != nil {
		cancel()
		return nil, lc.c.check(ctx, lctx, err)
	}
	return &limitedTx{tx: tx, c: lc.c, ctx: ctx, lctx: lctx, cancel: cancel}, nil
}

func (lc *limitedConn) Ping(ctx context.Context) error {
	lctx, cancel := limit(ctx, pgLimits.Statement)
	defer cancel()
	return lc.c.check(ctx, lctx, lc.Conn.Ping(lctx))
}

// ResetSession runs as the pool hands out an idle connection, with the
// caller's context; a connection that stopped answering fails it within
// pgLimits.Reset and the pool takes another.
func (lc *limitedConn) ResetSession(ctx context.Context) error {
	lctx, cancel := limit(ctx, pgLimits.Reset)
	defer cancel()
	err := lc.Conn.ResetSession(lctx)
	if err != nil && lctx.Err() != nil && ctx.Err() == nil {
		lc.c.timedOut()
	}
	return err
}

type limitedTx struct {
	tx         driver.Tx
	c          *limitedConnector
	ctx, lctx  context.Context
	cancel     context.CancelFunc
	finishOnce sync.Once
}

func (t *limitedTx) Commit() error {
	defer t.finish()
	return t.c.check(t.ctx, t.lctx, t.tx.Commit())
}

func (t *limitedTx) Rollback() error {
	defer t.finish()
	return t.c.check(t.ctx, t.lctx, t.tx.Rollback())
}

func (t *limitedTx) finish() { t.finishOnce.Do(t.cancel) }

type limitedStmt struct {
	*stdlib.Stmt
	c *limitedConnector
}

func (s *limitedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	lctx, cancel := limit(ctx, pgLimits.Statement)
	defer cancel()
	res, err := s.Stmt.ExecContext(lctx, args)
	return res, s.c.check(ctx, lctx, err)
}

func (s *limitedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	lctx, cancel := limit(ctx, pgLimits.Statement)
	rows, err := s.Stmt.QueryContext(lctx, args)
	if err != nil {
		cancel()
		return nil, s.c.check(ctx, lctx, err)
	}
	return wrapRows(rows, s.c, ctx, lctx, cancel), nil
}

// limitedRows ends its statement's limit when closed; a read cut by the
// limit says the database is unavailable.
type limitedRows struct {
	*stdlib.Rows
	c         *limitedConnector
	ctx, lctx context.Context
	cancel    context.CancelFunc
}

func wrapRows(rows driver.Rows, c *limitedConnector, ctx, lctx context.Context, cancel context.CancelFunc) driver.Rows {
	r, ok := rows.(*stdlib.Rows)
	if !ok {
		// Unknown rows: the limit ends by itself at its deadline.
		return rows
	}
	return &limitedRows{Rows: r, c: c, ctx: ctx, lctx: lctx, cancel: cancel}
}

func (r *limitedRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err == nil || err == io.EOF {
		return err
	}
	return r.c.check(r.ctx, r.lctx, err)
}

func (r *limitedRows) Close() error {
	defer r.cancel()
	return r.Rows.Close()
}
