package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// Outbound webhook endpoints. Their secrets are sealed with the server
// secret, like integration credentials; the queue of events and attempts
// is in webhooks_queue.go.

const webhookEndpointCols = "id, organization_id, environment_id, url, event_types, description, disabled, secret," +
	" previous_secret, previous_until, created_at, updated_at"

// scanWebhookEndpoint reads an endpoint, its secrets still sealed.
func scanWebhookEndpoint(row rowScanner) (store.WebhookEndpoint, error) {
	var e store.WebhookEndpoint
	var types string
	var until sql.NullInt64
	var created, updated int64
	if err := row.Scan(&e.ID, &e.OrganizationID, &e.EnvironmentID, &e.URL, &types, &e.Description, &e.Disabled, &e.Secret,
		&e.PreviousSecret, &until, &created, &updated); err != nil {
		return e, notFound(err)
	}
	if err := json.Unmarshal([]byte(types), &e.EventTypes); err != nil {
		return e, fmt.Errorf("sqlstore: webhook endpoint %s event types: %w", e.ID, err)
	}
	if e.EventTypes == nil {
		e.EventTypes = []string{}
	}
	e.PreviousUntil, e.CreatedAt, e.UpdatedAt = fromNullMS(until), fromMS(created), fromMS(updated)
	return e, nil
}

// openWebhookSecrets opens the sealed secrets of e.
func (db *DB) openWebhookSecrets(e *store.WebhookEndpoint) error {
	for _, s := range []*string{&e.Secret, &e.PreviousSecret} {
		if *s == "" {
			continue
		}
		plain, err := db.sealer.Open(*s)
		if err != nil {
			return fmt.Errorf("%w: webhook endpoint %s secret: %v", ErrSecretMismatch, e.ID, err)
		}
		*s = string(plain)
	}
	return nil
}

func (db *DB) webhookEndpoint(ctx context.Context, q querier, scope store.Scope, endpointID, lock string) (store.WebhookEndpoint, error) {
	e, err := scanWebhookEndpoint(q.QueryRowContext(ctx, "SELECT "+webhookEndpointCols+" FROM webhook_endpoints"+
		" WHERE id = $1 AND environment_id = $2"+lock, endpointID, scope.EnvironmentID))
	if err != nil {
		return e, err
	}
	return e, db.openWebhookSecrets(&e)
}

func webhookTypesJSON(types []string) string {
	if len(types) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(types)
	return string(b)
}

// WebhookEndpointCreate implements store.Webhooks.
func (db *DB) WebhookEndpointCreate(ctx context.Context, p *store.WebhookEndpointCreateParams) (store.WebhookEndpoint, error) {
	e := store.WebhookEndpoint{ID: id.NewAt(p.Now), OrganizationID: p.OrganizationID, EnvironmentID: p.EnvironmentID, URL: p.URL,
		EventTypes: p.EventTypes, Description: p.Description, Secret: p.Secret, CreatedAt: p.Now, UpdatedAt: p.Now}
	if e.EventTypes == nil {
		e.EventTypes = []string{}
	}
	_, err := db.exec(ctx, "INSERT INTO webhook_endpoints ("+webhookEndpointCols+") VALUES ($1, $2, $3, $4, $5, $6, false, $7, '',"+
		" NULL, $8, $8)", e.ID, e.OrganizationID, e.EnvironmentID, e.URL, webhookTypesJSON(e.EventTypes), e.Description,
		db.sealer.Seal([]byte(e.Secret)), ms(p.Now))
	if err != nil {
		return e, fmt.Errorf("sqlstore: creating a webhook endpoint: %w", err)
	}
	return e, nil
}

// WebhookEndpointList implements store.Webhooks.
func (db *DB) WebhookEndpointList(ctx context.Context, scope store.Scope) ([]store.WebhookEndpoint, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+webhookEndpointCols+" FROM webhook_endpoints WHERE environment_id = $1"+
		" ORDER BY created_at, id", scope.EnvironmentID)
	out, err := scanAll(rows, err, scanWebhookEndpoint)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: listing webhook endpoints: %w", err)
	}
	for i := range out {
		if err := db.openWebhookSecrets(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WebhookEndpointGet implements store.Webhooks.
func (db *DB) WebhookEndpointGet(ctx context.Context, scope store.Scope, endpointID string) (store.WebhookEndpoint, error) {
	return db.webhookEndpoint(ctx, db.r, scope, endpointID, "")
}

// WebhookEndpointUpdate implements store.Webhooks.
func (db *DB) WebhookEndpointUpdate(ctx context.Context, p *store.WebhookEndpointUpdateParams) (store.WebhookEndpoint, error) {
	var e store.WebhookEndpoint
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if e, err = db.webhookEndpoint(ctx, tx, p.Scope, p.ID, db.d.forUpdate); err != nil {
			return err
		}
		disabling := p.Disabled != nil && *p.Disabled && !e.Disabled
		if p.URL != nil {
			e.URL = *p.URL
		}
		if p.EventTypes != nil {
			e.EventTypes = append([]string{}, *p.EventTypes...)
		}
		if p.Description != nil {
			e.Description = *p.Description
		}
		if p.Disabled != nil {
			e.Disabled = *p.Disabled
		}
		e.UpdatedAt = p.Now
		if _, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET url = $1, event_types = $2, description = $3, disabled = $4,"+
			" updated_at = $5 WHERE id = $6", e.URL, webhookTypesJSON(e.EventTypes), e.Description, e.Disabled, ms(p.Now), e.ID); err != nil {
			return err
		}
		if disabling {
			return cancelWebhookAttempts(ctx, tx, []string{e.ID})
		}
		return nil
	})
	if err != nil && err != store.ErrNotFound {
		err = fmt.Errorf("sqlstore: updating a webhook endpoint: %w", err)
	}
	return e, err
}

// cancelWebhookAttempts ends the attempts of the endpoints that are not
// answered yet: a disabled endpoint gets nothing more.
func cancelWebhookAttempts(ctx context.Context, q querier, endpointIDs []string) error {
	var a args
	_, err := q.ExecContext(ctx, "UPDATE webhook_attempts SET due_at = NULL WHERE endpoint_id IN ("+a.list(endpointIDs)+")"+
		" AND due_at IS NOT NULL", a...)
	return err
}

// WebhookSecretRotate implements store.Webhooks: the current secret,
// sealed as it is, becomes the previous one.
func (db *DB) WebhookSecretRotate(ctx context.Context, p *store.WebhookSecretRotateParams) (store.WebhookEndpoint, error) {
	var e store.WebhookEndpoint
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET previous_secret = secret, previous_until = $1, secret = $2,"+
			" updated_at = $3 WHERE id = $4 AND environment_id = $5", ms(p.PreviousUntil), db.sealer.Seal([]byte(p.Secret)),
			ms(p.Now), p.ID, p.EnvironmentID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		e, err = db.webhookEndpoint(ctx, tx, p.Scope, p.ID, "")
		return err
	})
	if err != nil && err != store.ErrNotFound {
		err = fmt.Errorf("sqlstore: rotating a webhook secret: %w", err)
	}
	return e, err
}

// WebhookEndpointDelete implements store.Webhooks: its attempts go with it
// (ON DELETE CASCADE).
func (db *DB) WebhookEndpointDelete(ctx context.Context, scope store.Scope, endpointID string) error {
	res, err := db.exec(ctx, "DELETE FROM webhook_endpoints WHERE id = $1 AND environment_id = $2", endpointID, scope.EnvironmentID)
	if err != nil {
		return fmt.Errorf("sqlstore: deleting a webhook endpoint: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// WebhookEndpointTypes implements store.Webhooks.
func (db *DB) WebhookEndpointTypes(ctx context.Context, environmentID string) ([][]string, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT event_types FROM webhook_endpoints WHERE environment_id = $1 AND disabled = false",
		environmentID)
	return scanAll(rows, err, func(r rowScanner) ([]string, error) {
		var raw string
		if err := r.Scan(&raw); err != nil {
			return nil, err
		}
		var types []string
		return types, json.Unmarshal([]byte(raw), &types)
	})
}

// resealWebhookSecrets re-encrypts every endpoint's secrets (SecretRotate).
func resealWebhookSecrets(ctx context.Context, tx *sql.Tx, from, to Sealer) (int, error) {
	type row struct{ id, secret, previous string }
	rows, err := tx.QueryContext(ctx, "SELECT id, secret, previous_secret FROM webhook_endpoints")
	all, err := scanAll(rows, err, func(s rowScanner) (row, error) {
		var r row
		return r, s.Scan(&r.id, &r.secret, &r.previous)
	})
	if err != nil {
		return 0, err
	}
	reseal := func(r row, v string) (string, error) {
		if v == "" {
			return "", nil
		}
		plain, err := from.Open(v)
		if err != nil {
			return "", fmt.Errorf("%w: webhook endpoint %s secret: %v", ErrSecretMismatch, r.id, err)
		}
		return to.Seal(plain), nil
	}
	for _, r := range all {
		secret, err := reseal(r, r.secret)
		if err != nil {
			return 0, err
		}
		previous, err := reseal(r, r.previous)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET secret = $1, previous_secret = $2 WHERE id = $3",
			secret, previous, r.id); err != nil {
			return 0, err
		}
	}
	return len(all), nil
}

// webhookEndpointsByID reads endpoints of any environment, secrets opened.
func (db *DB) webhookEndpointsByID(ctx context.Context, ids []string) (map[string]store.WebhookEndpoint, error) {
	out := map[string]store.WebhookEndpoint{}
	if len(ids) == 0 {
		return out, nil
	}
	var a args
	rows, err := db.r.QueryContext(ctx, "SELECT "+webhookEndpointCols+" FROM webhook_endpoints WHERE "+db.inList(&a, "id", ids),
		db.planned(a)...)
	err = eachRow(rows, err, func(r rowScanner) error {
		e, err := scanWebhookEndpoint(r)
		if err != nil {
			return err
		}
		if err := db.openWebhookSecrets(&e); err != nil {
			return err
		}
		out[e.ID] = e
		return nil
	})
	return out, err
}

// WebhookMessagesChanged implements store.Webhooks. Only the ids' look-up
// reads deleted messages (by primary key): the others go through the
// indexes of undeleted messages (a subscriber's feed, a transaction's).
// environment_id is kept off the index choice where another column leads
// (SQLite would walk the environment's messages), and the order is made
// here: an ORDER BY created_at would choose the environment's index too.
func (db *DB) WebhookMessagesChanged(ctx context.Context, p *store.WebhookMessagesChangedParams) ([]store.Message, error) {
	return db.webhookMessagesChanged(ctx, db.r, p)
}

// webhookMessagesChanged is WebhookMessagesChanged on q (a change's
// transaction, for its outbox entry).
func (db *DB) webhookMessagesChanged(ctx context.Context, q querier, p *store.WebhookMessagesChangedParams) ([]store.Message, error) {
	base := func(a *args, env string) string {
		where := env + " = " + a.add(p.EnvironmentID)
		if !p.At.IsZero() {
			where += " AND updated_at = " + a.add(ms(p.At))
		}
		return where
	}
	var out []store.Message
	read := func(a args, where string) error {
		rows, err := q.QueryContext(ctx, "SELECT "+messageCols+" FROM messages WHERE "+where, a...)
		ms, err := scanAll(rows, err, scanMessage)
		out = append(out, ms...)
		return err
	}
	byID := db.d.unindexed + "environment_id"
	var err error
	switch {
	case len(p.IDs) > 0:
		for start := 0; start < len(p.IDs) && err == nil; start += webhookIDsPerRead {
			var a args
			where := base(&a, byID) + " AND id IN (" + a.list(p.IDs[start:min(start+webhookIDsPerRead, len(p.IDs))]) + ")"
			if p.SubscriberID != "" {
				where += " AND subscriber_id = " + a.add(p.SubscriberID)
			}
			if p.At.IsZero() {
				where += " AND deleted = false"
			}
			err = read(a, where)
		}
	case p.SubscriberID != "":
		var a args
		where := base(&a, byID) + " AND subscriber_id = " + a.add(p.SubscriberID) + " AND channel = 'in_app' AND deleted = false"
		err = read(a, where)
	case p.TransactionID != "":
		var a args
		where := base(&a, "environment_id") + " AND transaction_id = " + a.add(p.TransactionID) + " AND deleted = false"
		err = read(a, where)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlstore: the messages of a change: %w", err)
	}
	slices.SortFunc(out, func(x, y store.Message) int {
		if c := x.CreatedAt.Compare(y.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out, nil
}

// webhookIDsPerRead bounds the ids of one statement of WebhookMessagesChanged.
const webhookIDsPerRead = 500
