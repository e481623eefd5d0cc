package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

const envVarCols = "id, organization_id, var_key, var_type, is_secret, created_at, updated_at"

func scanEnvVar(row rowScanner) (store.EnvironmentVariable, error) {
	var v store.EnvironmentVariable
	var created, updated int64
	if err := row.Scan(&v.ID, &v.OrganizationID, &v.Key, &v.Type, &v.IsSecret, &created, &updated); err != nil {
		return v, notFound(err)
	}
	v.CreatedAt, v.UpdatedAt = fromMS(created), fromMS(updated)
	v.Values = []store.EnvironmentVariableValue{}
	return v, nil
}

// sealValue is a value as stored: sealed for a secret variable.
func (db *DB) sealValue(secret bool, v string) string {
	if secret {
		return db.sealer.Seal([]byte(v))
	}
	return v
}

// openValue is a stored value in the clear.
func (db *DB) openValue(secret bool, v string) (string, error) {
	if !secret {
		return v, nil
	}
	plain, err := db.sealer.Open(v)
	if err != nil {
		return "", fmt.Errorf("%w: an environment variable's value: %v", ErrSecretMismatch, err)
	}
	return string(plain), nil
}

// withValues reads the values of vars (in the clear) into them.
func (db *DB) withValues(ctx context.Context, q querier, vars []store.EnvironmentVariable) error {
	if len(vars) == 0 {
		return nil
	}
	at := map[string]int{}
	ids := make([]string, len(vars))
	for i, v := range vars {
		at[v.ID], ids[i] = i, v.ID
	}
	var a args
	rows, err := q.QueryContext(ctx, "SELECT variable_id, environment_id, value FROM environment_variable_values WHERE variable_id IN ("+
		a.list(ids)+") ORDER BY environment_id", a...)
	return eachRow(rows, err, func(r rowScanner) error {
		var vid string
		var val store.EnvironmentVariableValue
		if err := r.Scan(&vid, &val.EnvironmentID, &val.Value); err != nil {
			return err
		}
		v := &vars[at[vid]]
		var err error
		if val.Value, err = db.openValue(v.IsSecret, val.Value); err != nil {
			return err
		}
		v.Values = append(v.Values, val)
		return nil
	})
}

func (db *DB) envVarGet(ctx context.Context, q querier, scope store.Scope, key string, lock string) (store.EnvironmentVariable, error) {
	v, err := scanEnvVar(q.QueryRowContext(ctx, "SELECT "+envVarCols+" FROM environment_variables WHERE organization_id = $1"+
		" AND var_key = $2"+lock, scope.OrganizationID, key))
	if err != nil {
		return v, err
	}
	vs := []store.EnvironmentVariable{v}
	err = db.withValues(ctx, q, vs)
	return vs[0], err
}

// EnvironmentVariableGet implements store.EnvironmentVariables.
func (db *DB) EnvironmentVariableGet(ctx context.Context, scope store.Scope, key string) (store.EnvironmentVariable, error) {
	return db.envVarGet(ctx, db.r, scope, key, "")
}

// EnvironmentVariableList implements store.EnvironmentVariables. An
// organization has few variables: the search runs here, not in SQL, alike
// on both dialects.
func (db *DB) EnvironmentVariableList(ctx context.Context, scope store.Scope, search string) ([]store.EnvironmentVariable, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+envVarCols+" FROM environment_variables WHERE organization_id = $1 ORDER BY var_key",
		scope.OrganizationID)
	vars, err := scanAll(rows, err, scanEnvVar)
	if err != nil {
		return nil, err
	}
	search = strings.ToLower(search)
	vars = slices.DeleteFunc(vars, func(v store.EnvironmentVariable) bool {
		return !strings.Contains(strings.ToLower(v.Key), search)
	})
	if err := db.withValues(ctx, db.r, vars); err != nil {
		return nil, err
	}
	return vars, nil
}

// EnvironmentVariableCreate implements store.EnvironmentVariables.
func (db *DB) EnvironmentVariableCreate(ctx context.Context, p *store.EnvironmentVariableCreateParams) (store.EnvironmentVariable, error) {
	v := store.EnvironmentVariable{ID: id.NewAt(p.Now), OrganizationID: p.OrganizationID, Key: p.Key, Type: p.Type,
		IsSecret: p.IsSecret, Values: mergeValues(nil, p.Values), CreatedAt: p.Now, UpdatedAt: p.Now}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "INSERT INTO environment_variables ("+envVarCols+") VALUES ($1, $2, $3, $4, $5, $6, $7)"+
			" ON CONFLICT DO NOTHING", v.ID, v.OrganizationID, v.Key, v.Type, v.IsSecret, ms(v.CreatedAt), ms(v.UpdatedAt))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return store.ErrConflict
		}
		return db.writeValues(ctx, tx, v)
	})
	return v, err
}

// writeValues replaces the stored values of v with its Values.
func (db *DB) writeValues(ctx context.Context, tx *sql.Tx, v store.EnvironmentVariable) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM environment_variable_values WHERE variable_id = $1", v.ID); err != nil {
		return err
	}
	for _, val := range v.Values {
		if _, err := tx.ExecContext(ctx, "INSERT INTO environment_variable_values (variable_id, environment_id, value)"+
			" VALUES ($1, $2, $3)", v.ID, val.EnvironmentID, db.sealValue(v.IsSecret, val.Value)); err != nil {
			return err
		}
	}
	return nil
}

// mergeValues puts each of add in place of the value of its environment in
// vs, or beside them; the result is in environment order.
func mergeValues(vs, add []store.EnvironmentVariableValue) []store.EnvironmentVariableValue {
	out := slices.Clone(vs)
	for _, a := range add {
		i := slices.IndexFunc(out, func(v store.EnvironmentVariableValue) bool { return v.EnvironmentID == a.EnvironmentID })
		if i >= 0 {
			out[i] = a
		} else {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b store.EnvironmentVariableValue) int {
		return strings.Compare(a.EnvironmentID, b.EnvironmentID)
	})
	if out == nil {
		out = []store.EnvironmentVariableValue{}
	}
	return out
}

// EnvironmentVariableUpdate implements store.EnvironmentVariables.
func (db *DB) EnvironmentVariableUpdate(ctx context.Context, p *store.EnvironmentVariableUpdateParams) (store.EnvironmentVariable, error) {
	var v store.EnvironmentVariable
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if v, err = db.envVarGet(ctx, tx, p.Scope, p.Key, db.d.forUpdate); err != nil {
			return err
		}
		if p.NewKey != nil && *p.NewKey != v.Key {
			var other string
			err := tx.QueryRowContext(ctx, "SELECT id FROM environment_variables WHERE organization_id = $1 AND var_key = $2",
				p.OrganizationID, *p.NewKey).Scan(&other)
			if err == nil {
				return store.ErrConflict
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			v.Key = *p.NewKey
		}
		if p.Type != nil {
			v.Type = *p.Type
		}
		if p.IsSecret != nil {
			v.IsSecret = *p.IsSecret
		}
		v.Values, v.UpdatedAt = mergeValues(v.Values, p.Values), p.Now
		if _, err := tx.ExecContext(ctx, "UPDATE environment_variables SET var_key = $1, var_type = $2, is_secret = $3,"+
			" updated_at = $4 WHERE id = $5", v.Key, v.Type, v.IsSecret, ms(v.UpdatedAt), v.ID); err != nil {
			if db.d.unique(err) { // renamed onto a key created meanwhile
				return store.ErrConflict
			}
			return err
		}
		// Every value is written again: sealed or opened as the variable
		// now is.
		return db.writeValues(ctx, tx, v)
	})
	return v, err
}

// EnvironmentVariableDelete implements store.EnvironmentVariables.
func (db *DB) EnvironmentVariableDelete(ctx context.Context, scope store.Scope, key string) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var vid string
		if err := tx.QueryRowContext(ctx, "SELECT id FROM environment_variables WHERE organization_id = $1 AND var_key = $2"+
			db.d.forUpdate, scope.OrganizationID, key).Scan(&vid); err != nil {
			return notFound(err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM environment_variable_values WHERE variable_id = $1", vid); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM environment_variables WHERE id = $1", vid)
		return err
	})
}

// EnvironmentVariableValues implements store.EnvironmentVariables.
func (db *DB) EnvironmentVariableValues(ctx context.Context, environmentID string) (map[string]string, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT v.var_key, v.is_secret, x.value FROM environment_variable_values x"+
		" JOIN environment_variables v ON v.id = x.variable_id WHERE x.environment_id = $1", environmentID)
	out := map[string]string{}
	err = eachRow(rows, err, func(r rowScanner) error {
		var key, val string
		var secret bool
		if err := r.Scan(&key, &secret, &val); err != nil {
			return err
		}
		var err error
		out[key], err = db.openValue(secret, val)
		return err
	})
	return out, err
}

// resealVariables re-encrypts the values of secret variables (SecretRotate).
func resealVariables(ctx context.Context, tx *sql.Tx, from, to Sealer) (int, error) {
	type row struct{ variable, env, value string }
	rows, err := tx.QueryContext(ctx, "SELECT x.variable_id, x.environment_id, x.value FROM environment_variable_values x"+
		" JOIN environment_variables v ON v.id = x.variable_id WHERE v.is_secret")
	all, err := scanAll(rows, err, func(s rowScanner) (row, error) {
		var r row
		return r, s.Scan(&r.variable, &r.env, &r.value)
	})
	if err != nil {
		return 0, err
	}
	for _, r := range all {
		plain, err := from.Open(r.value)
		if err != nil {
			return 0, fmt.Errorf("%w: an environment variable's value: %v", ErrSecretMismatch, err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE environment_variable_values SET value = $1 WHERE variable_id = $2"+
			" AND environment_id = $3", to.Seal(plain), r.variable, r.env); err != nil {
			return 0, err
		}
	}
	return len(all), nil
}
