package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/herald-notify/herald/internal/store"
)

// bulkLoadPostgres copies subs into the subscribers table with COPY, which
// skips parsing and planning an INSERT per row. COPY is one statement: all
// rows or none.
func (db *DB) bulkLoadPostgres(ctx context.Context, subs []store.Subscriber) error {
	rows := make([][]any, len(subs))
	for i := range subs {
		rows[i] = bulkRow(&subs[i])
	}
	err := db.withWriter(ctx, func(conn *sql.Conn) error {
		return conn.Raw(func(driverConn any) error {
			c, ok := pgxConn(driverConn)
			if !ok {
				return fmt.Errorf("unexpected driver connection %T", driverConn)
			}
			_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"subscribers"}, bulkCols, pgx.CopyFromRows(rows))
			return err
		})
	})
	if db.d.unique(err) {
		return store.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("sqlstore: bulk load: %w", err)
	}
	return nil
}
