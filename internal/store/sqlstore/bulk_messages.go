package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/herald-notify/herald/internal/store"
)

// messageColList is messageCols as a list, for COPY.
var messageColList = strings.Split(strings.ReplaceAll(messageCols, " ", ""), ",")

// messageRow is a message's column values, converted as insertMessage does.
func messageRow(m *store.Message) []any {
	var tags any
	if m.Tags != nil {
		tags = marshalText(m.Tags, "[]")
	}
	return []any{m.ID, m.OrganizationID, m.EnvironmentID, m.NotificationID, m.JobID, m.SubscriberID, m.WorkflowID,
		m.TemplateIdentifier, m.TransactionID, m.Channel, m.ProviderID, m.Content, m.Subject, m.Avatar,
		orJSON(m.CTA, "{}"), nullJSON(m.Actor), orJSON(m.Payload, "{}"), nullJSON(m.Data), tags,
		orJSON(m.Overrides, "{}"), m.Status, m.Read, m.Seen, m.Archived, nullMS(m.LastReadAt), nullMS(m.LastSeenAt),
		m.Deleted, ms(m.CreatedAt), ms(m.UpdatedAt)}
}

// messageRowsPerStatement is small on purpose: modernc's cost of binding
// grows with the square of a statement's arguments (29 a row here), so
// beyond a few dozen rows a statement gets slower per row, not faster.
const messageRowsPerStatement = 16

// MessageBulkLoad inserts many new messages, all or none, for seeding
// benchmarks: through COPY on PostgreSQL and through prepared multi-row
// INSERTs on SQLite. Unlike the pipeline's insert it checks nothing: a
// message whose id or job_id exists is store.ErrConflict.
func (db *DB) MessageBulkLoad(ctx context.Context, msgs []store.Message) error {
	var err error
	if db.d.name == "postgres" {
		err = db.copyMessages(ctx, msgs)
	} else {
		err = db.insertMessagesSQLite(ctx, msgs)
	}
	if db.d.unique(err) {
		return store.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("sqlstore: message bulk load: %w", err)
	}
	return nil
}

func (db *DB) copyMessages(ctx context.Context, msgs []store.Message) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", driverConn)
		}
		i := 0
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if i == len(msgs) {
				return nil, nil
			}
			i++
			return messageRow(&msgs[i-1]), nil
		})
		_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"messages"}, messageColList, src)
		return err
	})
}

func (db *DB) insertMessagesSQLite(ctx context.Context, msgs []store.Message) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
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
				vals = append(vals, messageRow(&batch[i])...)
			}
			if _, err := st.ExecContext(ctx, vals...); err != nil {
				return err
			}
		}
		return nil
	})
}
