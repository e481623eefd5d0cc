package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// A state change of in-app messages is one SQL SET clause and the same
// change of their codes in Go, from which the counts move. Every change
// runs through changeState, which learns the codes of exactly the rows it
// changes.

// stateChange is one kind of change.
type stateChange struct {
	// set is the SQL SET clause; :now and :until are the change's times.
	set string
	// next is the code of a message of code c after the change; -1: gone.
	next func(c code) int
}

// seenSet marks a message seen; firstSeen keeps the first time.
const seenSet = "seen = true, last_seen_at = :now, first_seen_at = coalesce(first_seen_at, :now)"

// readSet marks a message read, keeping the time it was first read while
// it stays read.
const readSet = "read = true, last_read_at = CASE WHEN read THEN last_read_at ELSE :now END"

// Internal changes beside the store's actions.
const (
	changeMarkRead   = "v1-read"   // POST …/mark-as read: read and seen, times set anew
	changeMarkUnread = "v1-unread" // mark-as unread: not read, seen; archive untouched
	changeMarkUnseen = "v1-unseen" // mark-as unseen
	changeExpire     = "expire"    // a snooze is over: back as new, unread and unseen
)

func next(set, clear code) func(code) int {
	return func(c code) int { return int(c&^clear | set) }
}

var stateChanges = map[string]stateChange{
	changeMarkRead:   {"read = true, last_read_at = :now, " + seenSet, next(codeRead|codeSeen, 0)},
	store.InboxRead:  {"read = true, last_read_at = :now, " + seenSet, next(codeRead|codeSeen, 0)},
	changeMarkUnread: {"read = false, " + seenSet, next(codeSeen, codeRead)},
	store.InboxUnread: {"read = false, archived = false, archived_at = NULL, " + seenSet,
		next(codeSeen, codeRead|codeArchived)},
	store.InboxSeen:  {seenSet, next(codeSeen, 0)},
	changeMarkUnseen: {"seen = false, first_seen_at = NULL", next(0, codeSeen)},
	store.InboxArchive: {"archived = true, archived_at = CASE WHEN archived THEN archived_at ELSE :now END, snoozed_until = NULL, " +
		readSet + ", " + seenSet, next(codeArchived|codeRead|codeSeen, codeSnoozed)},
	store.InboxUnarchive: {"archived = false, archived_at = NULL, " + readSet + ", " + seenSet,
		next(codeRead|codeSeen, codeArchived)},
	store.InboxSnooze: {"snoozed_until = :until, archived = false, archived_at = NULL, " + seenSet,
		next(codeSnoozed|codeSeen, codeArchived)},
	store.InboxUnsnooze: {"snoozed_until = NULL, archived = false, archived_at = NULL, " + seenSet,
		next(codeSeen, codeSnoozed|codeArchived)},
	// The message comes back at the time its snooze ended, as if new.
	changeExpire: {"created_at = snoozed_until, snoozed_until = NULL, read = false, seen = false, first_seen_at = NULL",
		next(0, codeSnoozed|codeRead|codeSeen)},
	store.InboxDelete: {"deleted = true", func(code) int { return -1 }},
}

// selection is the messages a change applies to: a WHERE clause over
// messages, with its arguments numbered from $1.
type selection struct {
	where string
	args  args
	// order and limit bound the change to the first rows (both or neither).
	order string
	limit int
	// skipLocked passes over rows another transaction holds (PostgreSQL).
	skipLocked bool
}

// subscriberSelection selects a subscriber's in-app messages, with the
// filter's conditions and, when given, only the ids.
func (db *DB) subscriberSelection(scope store.Scope, subscriberID string, f *store.InboxFilter, ids []string) selection {
	var s selection
	if len(ids) > 0 {
		s.where = db.byIDsFilter(&s.args, scope, subscriberID, ids)
	} else {
		s.where = db.inboxFilter(&s.args, scope, subscriberID)
	}
	if f != nil {
		s.where += db.filterConditions(&s.args, f)
	}
	return s
}

// setClause is the change's SET clause, its arguments added to a.
func setClause(a *args, ch stateChange, until, now time.Time) string {
	nowPH := a.add(ms(now))
	set := strings.ReplaceAll(ch.set, ":now", nowPH)
	if strings.Contains(set, ":until") {
		set = strings.ReplaceAll(set, ":until", a.add(ms(until)))
	}
	return set + ", updated_at = " + nowPH
}

// changeState applies a change to the selected messages and adds how their
// codes moved to counts; it returns how many it changed.
func (db *DB) changeState(ctx context.Context, tx *sql.Tx, kind string, sel selection, until, now time.Time,
	counts *pendingCounts) (int, error) {
	ch, ok := stateChanges[kind]
	if !ok {
		return 0, fmt.Errorf("sqlstore: unknown inbox change %q", kind)
	}
	a := append(args(nil), sel.args...)
	bound := ""
	if sel.limit > 0 {
		bound = " ORDER BY " + sel.order + " LIMIT " + strconv.Itoa(sel.limit)
	}
	n, err := db.d.changeState(ctx, tx, ch, sel, bound, a, until, now, counts)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: inbox %s: %w", kind, err)
	}
	return n, nil
}

// collectMoves reads rows of (subscriber, environment, code, tags, count)
// and moves their counts as the change moves their codes; it returns how
// many messages they were.
func collectMoves(rows *sql.Rows, err error) func(ch stateChange, counts *pendingCounts) (int, error) {
	return func(ch stateChange, counts *pendingCounts) (int, error) {
		total := 0
		err := eachRow(rows, err, func(r rowScanner) error {
			var sub, env, tags string
			var c, n int
			if err := r.Scan(&sub, &env, &c, &tags, &n); err != nil {
				return err
			}
			if c < 0 || c >= codeCount {
				return fmt.Errorf("code %d", c)
			}
			counts.delta(env, sub).move(code(c), ch.next(code(c)), tags, n)
			total += n
			return nil
		})
		return total, err
	}
}
