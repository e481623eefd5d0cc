package sqlstore

import "database/sql"

// rowScanner is a row to scan: a *sql.Row, or *sql.Rows at a row.
type rowScanner = interface{ Scan(...any) error }

// scanAll reads every row of a query with scan, closes them and checks
// rows.Err (a query that failed midway is an error, not a short list); err
// is the query's own error. The result is never nil.
func scanAll[T any](rows *sql.Rows, err error, scan func(rowScanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// eachRow calls fn at every row of a query, closes the rows and checks
// rows.Err; err is the query's own error.
func eachRow(rows *sql.Rows, err error, fn func(rowScanner) error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
