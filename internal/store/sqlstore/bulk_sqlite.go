package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/herald-notify/herald/internal/store"
)

// bulkRowsPerStatement keeps a statement's parameters (14 a row) well under
// SQLite's limit of 32766.
const bulkRowsPerStatement = 200

// bulkLoadSQLite inserts subs in one transaction through multi-row INSERTs
// with anonymous (?) placeholders, each shape prepared once.
func (db *DB) bulkLoadSQLite(ctx context.Context, subs []store.Subscriber) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		prepared := map[int]*sql.Stmt{}
		defer func() {
			for _, st := range prepared {
				st.Close()
			}
		}()
		vals := make([]any, 0, bulkRowsPerStatement*len(bulkCols))
		for start := 0; start < len(subs); start += bulkRowsPerStatement {
			batch := subs[start:min(start+bulkRowsPerStatement, len(subs))]
			st, ok := prepared[len(batch)]
			if !ok {
				row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(bulkCols)), ", ") + ")"
				q := "INSERT INTO subscribers (" + strings.Join(bulkCols, ", ") + ") VALUES " +
					strings.TrimSuffix(strings.Repeat(row+", ", len(batch)), ", ")
				var err error
				if st, err = tx.PrepareContext(ctx, q); err != nil {
					return fmt.Errorf("sqlstore: bulk load: %w", err)
				}
				prepared[len(batch)] = st
			}
			vals = vals[:0]
			for i := range batch {
				vals = append(vals, bulkRow(&batch[i])...)
			}
			if _, err := st.ExecContext(ctx, vals...); err != nil {
				if db.d.unique(err) {
					return store.ErrConflict
				}
				return fmt.Errorf("sqlstore: bulk load: %w", err)
			}
		}
		return nil
	})
}
