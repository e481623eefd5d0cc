package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/herald-notify/herald/internal/store"
)

// messageColList is messageCols as a list, for COPY.
var messageColList = strings.Split(strings.ReplaceAll(messageCols, " ", ""), ",")

// messageRowsPerStatement is small on purpose: modernc's cost of binding
// grows with the square of a statement's arguments (29 a row here), so
// beyond a few dozen rows a statement gets slower per row, not faster.
const messageRowsPerStatement = 16

// MessageBulkLoad inserts many new messages and adds them to their
// subscribers' inbox counts, all in one transaction, for seeding benchmarks:
// through COPY on PostgreSQL and through prepared multi-row INSERTs on
// SQLite. Unlike the pipeline's insert it checks nothing: a message whose id
// or job_id exists is store.ErrConflict.
func (db *DB) MessageBulkLoad(ctx context.Context, msgs []store.Message) error {
	var counts pendingCounts
	for i := range msgs {
		if msgs[i].Channel == "in_app" && !msgs[i].Deleted {
			counts.add(&msgs[i])
		}
	}
	err := db.withWriter(ctx, func(conn *sql.Conn) error {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		err = db.d.loadMessages(ctx, conn, tx, msgs)
		if err == nil {
			counts.perStatement = db.d.countsPerStatement
			err = db.applyCounts(ctx, tx, &counts)
		}
		if err != nil {
			tx.Rollback() //nolint:errcheck
			return err
		}
		return tx.Commit()
	})
	if db.d.unique(err) {
		return store.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("sqlstore: message bulk load: %w", err)
	}
	return nil
}

// copyMessages copies msgs into the messages table, inside the transaction
// open on conn.
func copyMessages(ctx context.Context, conn *sql.Conn, msgs []store.Message) error {
	return conn.Raw(func(driverConn any) error {
		c, ok := pgxConn(driverConn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", driverConn)
		}
		i := 0
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if i == len(msgs) {
				return nil, nil
			}
			i++
			return messageValues(&msgs[i-1]), nil
		})
		_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"messages"}, messageColList, src)
		return err
	})
}

// insertMessagesSQLite inserts msgs in tx through multi-row INSERTs with
// anonymous placeholders, each shape prepared once.
func insertMessagesSQLite(ctx context.Context, tx *sql.Tx, msgs []store.Message) error {
	prepared := map[int]*sql.Stmt{}
	defer func() {
		for _, st := range prepared {
			st.Close()
		}
	}()
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(messageColList)), ", ") + ")"
	vals := make([]any, 0, messageRowsPerStatement*len(messageColList))
	for start := 0; start < len(msgs); start += messageRowsPerStatement {
		batch := msgs[start:min(start+messageRowsPerStatement, len(msgs))]
		st, ok := prepared[len(batch)]
		if !ok {
			q := "INSERT INTO messages (" + messageCols + ") VALUES " +
				strings.TrimSuffix(strings.Repeat(row+", ", len(batch)), ", ")
			var err error
			if st, err = tx.PrepareContext(ctx, q); err != nil {
				return err
			}
			prepared[len(batch)] = st
		}
		vals = vals[:0]
		for i := range batch {
			vals = append(vals, messageValues(&batch[i])...)
		}
		if _, err := st.ExecContext(ctx, vals...); err != nil {
			return err
		}
	}
	return nil
}
