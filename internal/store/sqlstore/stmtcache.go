package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// The modernc SQLite driver prepares every statement anew: at a few thousand
// triggers a second, preparing took a third of all CPU. The "sqlite-cached"
// driver keeps each connection's prepared statements by SQL text (up to
// maxCachedStmts); a statement whose rows are still open is not shared, and
// multi-statement scripts (migrations) bypass the cache.
const maxCachedStmts = 256

func init() { sql.Register("sqlite-cached", cachingDriver{&sqlite.Driver{}}) }

type cachingDriver struct{ d driver.Driver }

func (c cachingDriver) Open(name string) (driver.Conn, error) {
	conn, err := c.d.Open(name)
	if err != nil {
		return nil, err
	}
	return &cachingConn{Conn: conn, stmts: map[string]*cachedStmt{}}, nil
}

type cachedStmt struct {
	driver.Stmt
	busy bool // its rows are open
	// order maps the statement's positional parameters to the caller's
	// numbered ones (see positional).
	order []int
}

// positional rewrites the numbered parameters ($1, $2, …) of q, outside
// quotes, as anonymous ones (?) and returns which argument each takes.
// SQLite looks a numbered parameter's name up in a list as long as the
// statement's parameters, once per parameter bound: a multi-row statement of
// several hundred values spent a fifth of all CPU there. Anonymous
// parameters bind by position.
func positional(q string) (string, []int) {
	var b strings.Builder
	b.Grow(len(q))
	var order []int
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '$' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			n, j := 0, i+1
			for ; j < len(q) && q[j] >= '0' && q[j] <= '9'; j++ {
				n = n*10 + int(q[j]-'0')
			}
			order = append(order, n)
			b.WriteByte('?')
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), order
}

// bind arranges args for a statement rewritten by positional.
func (st *cachedStmt) bind(args []driver.NamedValue) ([]driver.NamedValue, error) {
	if st.order == nil {
		return args, nil
	}
	out := make([]driver.NamedValue, len(st.order))
	for i, n := range st.order {
		if n < 1 || n > len(args) {
			return nil, fmt.Errorf("sqlstore: statement parameter $%d has no argument (%d given)", n, len(args))
		}
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: args[n-1].Value}
	}
	return out, nil
}

// cachingConn is used by one goroutine at a time, as database/sql guarantees.
type cachingConn struct {
	driver.Conn
	stmts map[string]*cachedStmt
}

var (
	_ driver.ExecerContext      = (*cachingConn)(nil)
	_ driver.QueryerContext     = (*cachingConn)(nil)
	_ driver.ConnBeginTx        = (*cachingConn)(nil)
	_ driver.ConnPrepareContext = (*cachingConn)(nil)
	_ driver.Pinger             = (*cachingConn)(nil)
	_ driver.NamedValueChecker  = (*cachingConn)(nil)
)

// stmt returns a prepared statement for q and whether it is the cache's.
func (c *cachingConn) stmt(ctx context.Context, q string) (*cachedStmt, bool, error) {
	if st, ok := c.stmts[q]; ok && !st.busy {
		return st, true, nil
	}
	rewritten, order := positional(q)
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, rewritten)
	if err != nil {
		return nil, false, err
	}
	cs := &cachedStmt{Stmt: st, order: order}
	if _, taken := c.stmts[q]; !taken && len(c.stmts) < maxCachedStmts {
		c.stmts[q] = cs
		return cs, true, nil
	}
	return cs, false, nil
}

func script(q string) bool { return strings.Contains(q, ";") }

func (c *cachingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	if script(q) {
		return c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
	}
	st, cached, err := c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	if !cached {
		defer st.Close()
	}
	if args, err = st.bind(args); err != nil {
		return nil, err
	}
	return st.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	if script(q) {
		return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
	}
	st, cached, err := c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	if args, err = st.bind(args); err != nil {
		if !cached {
			st.Close()
		}
		return nil, err
	}
	rows, err := st.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		if !cached {
			st.Close()
		}
		return nil, err
	}
	st.busy = true
	return &cachedRows{Rows: rows, st: st, owned: !cached}, nil
}

func (c *cachingConn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, o)
}

func (c *cachingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
}

func (c *cachingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *cachingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (c *cachingConn) Close() error {
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
	return c.Conn.Close()
}

// cachedRows frees its statement for reuse (or closes it) when closed.
type cachedRows struct {
	driver.Rows
	st    *cachedStmt
	owned bool
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.st.busy = false
	if r.owned {
		r.st.Close()
	}
	return err
}
