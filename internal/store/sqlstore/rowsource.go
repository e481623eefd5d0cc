package sqlstore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Row sources. A multi-row statement reads its rows from a row source: on
// SQLite a VALUES list (one placeholder a value, each cast to its column's
// type); on PostgreSQL unnest over one array argument a column, so that the
// statement's text, its prepared statement and its plan are the same for
// any number of rows — with VALUES lists every batch size was a statement of
// its own, parsed and planned again (2–3 ms each under load) and cached on
// every connection.

// valuesSource is SQLite's dialect.rowSource: VALUES (…), (…).
func valuesSource(a *args, rows [][]any, types []string) (string, error) {
	vals := make([]string, len(rows))
	for r, row := range rows {
		ph := make([]string, len(row))
		for i, v := range row {
			switch types[i] {
			case "TEXT", "BIGINT", "INTEGER":
				ph[i] = "CAST(" + a.add(v) + " AS " + types[i] + ")"
			default: // SQLite has no JSONB or BOOLEAN type to cast to: the column's affinity applies
				ph[i] = a.add(v)
			}
		}
		vals[r] = "(" + strings.Join(ph, ", ") + ")"
	}
	return "VALUES " + strings.Join(vals, ", "), nil
}

// unnestSource is PostgreSQL's dialect.rowSource: SELECT CAST(u.c0 AS T0), …
// FROM unnest(CAST($1 AS E0[]), …) AS u(c0, …).
func unnestSource(a *args, rows [][]any, types []string) (string, error) {
	cols := make([]string, len(types))
	arrays := make([]string, len(types))
	names := make([]string, len(types))
	for i, typ := range types {
		arr, elem, err := columnArray(rows, i, typ)
		if err != nil {
			return "", err
		}
		names[i] = "c" + strconv.Itoa(i)
		arrays[i] = "CAST(" + a.add(arr) + " AS " + elem + "[])"
		cols[i] = "CAST(u." + names[i] + " AS " + typ + ")"
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM unnest(" + strings.Join(arrays, ", ") + ") AS u(" +
		strings.Join(names, ", ") + ")", nil
}

// columnArray is column i of rows as a Go slice pgx sends as an array (nil
// elements are NULL), and the array's element type.
func columnArray(rows [][]any, i int, typ string) (any, string, error) {
	switch typ {
	case "TEXT", "JSONB":
		out := make([]*string, len(rows))
		for r, row := range rows {
			switch v := row[i].(type) {
			case nil:
			case string:
				out[r] = &v
			case *string:
				out[r] = v
			case []byte:
				s := string(v)
				out[r] = &s
			case json.RawMessage:
				s := string(v)
				out[r] = &s
			default:
				return nil, "", fmt.Errorf("sqlstore: column %d: %T is not text", i, v)
			}
		}
		return out, "TEXT", nil
	case "BIGINT", "INTEGER":
		out := make([]*int64, len(rows))
		for r, row := range rows {
			var n int64
			switch v := row[i].(type) {
			case nil:
				continue
			case int:
				n = int64(v)
			case int64:
				n = v
			case int32:
				n = int64(v)
			case *int64:
				if v == nil {
					continue
				}
				n = *v
			default:
				return nil, "", fmt.Errorf("sqlstore: column %d: %T is not an integer", i, v)
			}
			out[r] = &n
		}
		return out, "BIGINT", nil
	case "BOOLEAN":
		out := make([]*bool, len(rows))
		for r, row := range rows {
			switch v := row[i].(type) {
			case nil:
			case bool:
				out[r] = &v
			default:
				return nil, "", fmt.Errorf("sqlstore: column %d: %T is not a boolean", i, v)
			}
		}
		return out, "BOOLEAN", nil
	}
	return nil, "", fmt.Errorf("sqlstore: column %d: no array for type %s", i, typ)
}

// insertFrom is the statement that inserts rows (one chunk) into table's
// cols from the dialect's row source; its arguments are added to a.
func (db *DB) insertFrom(a *args, table, cols string, rows [][]any, types []string) (string, error) {
	src, err := db.d.rowSource(a, rows, types)
	if err != nil {
		return "", err
	}
	return "INSERT INTO " + table + " (" + cols + ") SELECT * FROM (" + src + ") v", nil
}
