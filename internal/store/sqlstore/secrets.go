package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/herald-notify/herald/internal/store"
)

// What the store seals with the server secret: integration credentials,
// the secret fields of integration configurations, the stored answers of
// idempotent session requests, the copies of API keys that check inbox
// subscriberHash values, and the secret check value.

// ErrSecretMismatch is returned when the store's sealed values do not open
// with the server secret it was opened with: the secret was changed.
var ErrSecretMismatch = errors.New("sqlstore: the server secret does not open the values this store encrypted")

const (
	settingSecretCheck = "secret_check"
	secretCheckText    = "herald: this server secret opens this store"
)

// splitConfigurations separates the secret fields of a configurations
// object from the others: the public object for its column, and the secret
// fields (nil when there are none) to be sealed.
func splitConfigurations(confs store.JSON) (public string, secrets store.JSON) {
	if len(confs) == 0 {
		return "{}", nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(confs, &m) != nil || m == nil {
		return string(confs), nil
	}
	sec := map[string]json.RawMessage{}
	for k, v := range m {
		if store.IsSecretConfiguration(k) {
			sec[k] = v
			delete(m, k)
		}
	}
	if len(sec) == 0 {
		return string(confs), nil
	}
	pub, _ := json.Marshal(m)
	secrets, _ = json.Marshal(sec)
	return string(pub), secrets
}

// mergeConfigurations puts opened secret fields back into the public object.
func mergeConfigurations(public string, secrets store.JSON) (store.JSON, error) {
	if len(secrets) == 0 {
		return store.JSON(public), nil
	}
	var pub, sec map[string]json.RawMessage
	if err := json.Unmarshal([]byte(public), &pub); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(secrets, &sec); err != nil {
		return nil, err
	}
	if pub == nil {
		pub = map[string]json.RawMessage{}
	}
	maps.Copy(pub, sec)
	return json.Marshal(pub)
}

// SecretCheck verifies that the store's sealed values open with the store's
// server secret, and returns ErrSecretMismatch when they do not. On the first
// start of a store without a check value (new, or written by an older
// Herald) it checks the values sealed already, then records a check value.
func (db *DB) SecretCheck(ctx context.Context) error {
	check, err := db.setting(ctx, db.w, settingSecretCheck)
	if errors.Is(err, store.ErrNotFound) {
		if err := db.probeSealed(ctx); err != nil {
			return err
		}
		if _, err := db.exec(ctx, "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
			settingSecretCheck, db.sealer.Seal([]byte(secretCheckText))); err != nil {
			return fmt.Errorf("sqlstore: writing the secret check: %w", err)
		}
		// Another process may have written it first, with another secret.
		check, err = db.setting(ctx, db.w, settingSecretCheck)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: reading the secret check: %w", err)
	}
	return checkOpens(db.sealer, check)
}

func checkOpens(s Sealer, check string) error {
	plain, err := s.Open(check)
	if err != nil || string(plain) != secretCheckText {
		return ErrSecretMismatch
	}
	return nil
}

func (db *DB) setting(ctx context.Context, q querier, name string) (string, error) {
	var v string
	err := q.QueryRowContext(ctx, "SELECT value FROM settings WHERE name = $1", name).Scan(&v)
	return v, notFound(err)
}

// probeSealed opens one sealed value of each kind, if there is one.
func (db *DB) probeSealed(ctx context.Context) error {
	for _, tc := range [][2]string{{"integrations", "credentials"}, {"integrations", "secret_configurations"}, {"api_keys", "sealed_key"}} {
		table, col := tc[0], tc[1]
		var sealed string
		err := db.w.QueryRowContext(ctx, "SELECT "+col+" FROM "+table+" WHERE "+col+" <> '' LIMIT 1").Scan(&sealed)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
		if _, err := db.sealer.Open(sealed); err != nil {
			return ErrSecretMismatch
		}
	}
	return nil
}

// sealedIntegration is the sealed columns of one integration.
type sealedIntegration struct {
	id, credentials, configurations, secrets string
}

// sealedIntegrations reads the sealed columns of every integration, deleted
// ones too; with clearOnly, of those holding secret fields in the clear.
func sealedIntegrations(ctx context.Context, q querier, clearOnly bool) ([]sealedIntegration, error) {
	rows, err := q.QueryContext(ctx, "SELECT id, credentials, configurations, secret_configurations FROM integrations ORDER BY id")
	var out []sealedIntegration
	err = eachRow(rows, err, func(r rowScanner) error {
		var s sealedIntegration
		if err := r.Scan(&s.id, &s.credentials, &s.configurations, &s.secrets); err != nil {
			return err
		}
		if !clearOnly || hasSecretConfiguration(s.configurations) {
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// reseal re-encrypts one integration's sealed columns from one sealer to
// another (or the same), moving secret configuration fields kept in the
// clear (rows written before they were sealed) into the sealed column. A
// value from does not open is ErrSecretMismatch.
func reseal(in sealedIntegration, from, to Sealer) (sealedIntegration, error) {
	open := func(what, v string) (store.JSON, error) {
		if v == "" {
			return nil, nil
		}
		plain, err := from.Open(v)
		if err != nil {
			return nil, fmt.Errorf("%w: integration %s %s: %v", ErrSecretMismatch, in.id, what, err)
		}
		return plain, nil
	}
	seal := func(v store.JSON) string {
		if len(v) == 0 {
			return ""
		}
		return to.Seal(v)
	}
	creds, err := open("credentials", in.credentials)
	if err != nil {
		return in, err
	}
	secrets, err := open("configurations", in.secrets)
	if err != nil {
		return in, err
	}
	merged, err := mergeConfigurations(in.configurations, secrets)
	if err != nil {
		return in, fmt.Errorf("integration %s configurations: %w", in.id, err)
	}
	public, secrets := splitConfigurations(merged)
	return sealedIntegration{id: in.id, credentials: seal(creds), configurations: public, secrets: seal(secrets)}, nil
}

func updateSealed(ctx context.Context, tx *sql.Tx, s sealedIntegration) error {
	_, err := tx.ExecContext(ctx, "UPDATE integrations SET credentials = $1, configurations = $2, secret_configurations = $3 WHERE id = $4",
		s.credentials, s.configurations, s.secrets, s.id)
	return err
}

// IntegrationSealSecrets seals the secret configuration fields that rows
// written before they were sealed keep in the clear, and returns how many
// integrations it changed. Run at start, after SecretCheck.
func (db *DB) IntegrationSealSecrets(ctx context.Context) (int, error) {
	// Look first without the write lock: there is nothing to do but once.
	ins, err := sealedIntegrations(ctx, db.r, true)
	if err != nil || len(ins) == 0 {
		return 0, err
	}
	n := 0
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		ins, err := sealedIntegrations(ctx, tx, true)
		if err != nil {
			return err
		}
		for _, in := range ins {
			out, err := reseal(in, db.sealer, db.sealer)
			if err != nil {
				return err
			}
			if err := updateSealed(ctx, tx, out); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlstore: sealing secret configurations: %w", err)
	}
	return n, nil
}

// hasSecretConfiguration reports a secret field in a public configurations object.
func hasSecretConfiguration(confs string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(confs), &m) != nil {
		return false
	}
	for k := range m {
		if store.IsSecretConfiguration(k) {
			return true
		}
	}
	return false
}

// RotateStats counts what SecretRotate re-encrypted.
type RotateStats struct {
	Integrations        int // rows of integrations (credentials, secret configurations)
	IdempotentResponses int // stored answers of session requests
	APIKeys             int // copies of API keys (revoked ones too)
	Variables           int // values of secret environment variables
	WebhookEndpoints    int // webhook endpoints (current and previous secrets)
}

// idempotencyPage is how many stored answers SecretRotate reads at a time.
const idempotencyPage = 200

// SecretRotate re-encrypts every value sealed with from so that it opens
// with to, in one transaction: integration credentials and secret
// configurations (sealing any still in the clear), stored answers of
// session requests, copies of API keys, and the secret check value. It returns
// ErrSecretMismatch, changing nothing, when from does not open the store.
// Every Herald process of the store should be stopped while it runs.
func (db *DB) SecretRotate(ctx context.Context, from, to Sealer) (RotateStats, error) {
	var st RotateStats
	ctx = withoutLimits(ctx) // one transaction over every sealed value
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		check, err := db.setting(ctx, tx, settingSecretCheck)
		if err == nil {
			if err := checkOpens(from, check); err != nil {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		ins, err := sealedIntegrations(ctx, tx, false)
		if err != nil {
			return err
		}
		for _, in := range ins {
			out, err := reseal(in, from, to)
			if err != nil {
				return err
			}
			if err := updateSealed(ctx, tx, out); err != nil {
				return err
			}
			st.Integrations++
		}
		if st.IdempotentResponses, err = resealIdempotent(ctx, tx, from, to); err != nil {
			return err
		}
		if st.APIKeys, err = resealAPIKeys(ctx, tx, from, to); err != nil {
			return err
		}
		if st.Variables, err = resealVariables(ctx, tx, from, to); err != nil {
			return err
		}
		if st.WebhookEndpoints, err = resealWebhookSecrets(ctx, tx, from, to); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO settings (name, value) VALUES ($1, $2)"+
			" ON CONFLICT (name) DO UPDATE SET value = excluded.value", settingSecretCheck, to.Seal([]byte(secretCheckText)))
		return err
	})
	if err != nil && !errors.Is(err, ErrSecretMismatch) {
		err = fmt.Errorf("sqlstore: rotating the server secret: %w", err)
	}
	return st, err
}

// resealIdempotent re-encrypts the stored answers of session requests. They
// are the bodies sealed with the "v1:" prefix: every other stored answer is
// a JSON document, which cannot start with "v".
func resealIdempotent(ctx context.Context, tx *sql.Tx, from, to Sealer) (int, error) {
	type row struct {
		env, key string
		body     []byte
	}
	n := 0
	var afterEnv, afterKey string
	for {
		rows, err := tx.QueryContext(ctx, "SELECT environment_id, idem_key, body FROM idempotency_keys"+
			" WHERE body IS NOT NULL AND (environment_id > $1 OR (environment_id = $1 AND idem_key > $2))"+
			" ORDER BY environment_id, idem_key LIMIT $3", afterEnv, afterKey, idempotencyPage)
		page, err := scanAll(rows, err, func(s rowScanner) (row, error) {
			var r row
			return r, s.Scan(&r.env, &r.key, &r.body)
		})
		if err != nil {
			return n, err
		}
		for _, r := range page {
			if !bytes.HasPrefix(r.body, []byte("v1:")) {
				continue
			}
			plain, err := from.Open(string(r.body))
			if err != nil {
				return n, fmt.Errorf("%w: the stored answer of an idempotency key: %v", ErrSecretMismatch, err)
			}
			if _, err := tx.ExecContext(ctx, "UPDATE idempotency_keys SET body = $1 WHERE environment_id = $2 AND idem_key = $3",
				[]byte(to.Seal(plain)), r.env, r.key); err != nil {
				return n, err
			}
			n++
		}
		if len(page) < idempotencyPage {
			return n, nil
		}
		afterEnv, afterKey = page[len(page)-1].env, page[len(page)-1].key
	}
}

// resealAPIKeys re-encrypts the copies of API keys, revoked ones too.
func resealAPIKeys(ctx context.Context, tx *sql.Tx, from, to Sealer) (int, error) {
	rows, err := tx.QueryContext(ctx, "SELECT id, sealed_key FROM api_keys WHERE sealed_key <> '' ORDER BY id")
	type row struct{ id, sealed string }
	all, err := scanAll(rows, err, func(s rowScanner) (row, error) {
		var r row
		return r, s.Scan(&r.id, &r.sealed)
	})
	if err != nil {
		return 0, err
	}
	for _, r := range all {
		plain, err := from.Open(r.sealed)
		if err != nil {
			return 0, fmt.Errorf("%w: the copy of API key %s: %v", ErrSecretMismatch, r.id, err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET sealed_key = $1 WHERE id = $2", to.Seal(plain), r.id); err != nil {
			return 0, err
		}
	}
	return len(all), nil
}
