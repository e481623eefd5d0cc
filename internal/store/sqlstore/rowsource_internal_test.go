package sqlstore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The PostgreSQL row source is one statement whatever the number of rows:
// its text and the number of its arguments depend on the columns alone.
func TestUnnestSourceIsTheSameForAnyNumberOfRows(t *testing.T) {
	types := []string{"TEXT", "JSONB", "BIGINT", "INTEGER", "BOOLEAN"}
	s := "x"
	row := []any{"a", json.RawMessage(`{"k":1}`), int64(7), 3, true}
	nulls := []any{nil, nil, nil, nil, nil}
	var one, many args
	q1, err := unnestSource(&one, [][]any{row}, types)
	require.NoError(t, err)
	qn, err := unnestSource(&many, [][]any{row, nulls, {&s, []byte("[]"), 8, int32(4), false}}, types)
	require.NoError(t, err)
	require.Equal(t, q1, qn)
	require.Len(t, many, len(types))
	require.Contains(t, qn, "CAST(u.c1 AS JSONB)")
	require.Equal(t, []*string{ptr("a"), nil, ptr("x")}, many[0])
	require.Equal(t, []*int64{ptr(int64(7)), nil, ptr(int64(8))}, many[2])
	require.Equal(t, []*bool{ptr(true), nil, ptr(false)}, many[4])

	_, err = unnestSource(&args{}, [][]any{{3.5}}, []string{"TEXT"})
	require.ErrorContains(t, err, "is not text")
	_, err = unnestSource(&args{}, [][]any{{"a"}}, []string{"UUID"})
	require.ErrorContains(t, err, "no array for type UUID")
}

// SQLite's row source is a VALUES list that casts only to the types SQLite
// has (a cast to JSONB would take numeric affinity).
func TestValuesSourceCastsOnlySQLiteTypes(t *testing.T) {
	var a args
	q, err := valuesSource(&a, [][]any{{"a", `{"k":1}`, 1, true}, {"b", nil, 2, false}}, []string{"TEXT", "JSONB", "BIGINT", "BOOLEAN"})
	require.NoError(t, err)
	require.Equal(t, "VALUES (CAST($1 AS TEXT), $2, CAST($3 AS BIGINT), $4), (CAST($5 AS TEXT), $6, CAST($7 AS BIGINT), $8)", q)
	require.Len(t, a, 8)
	require.False(t, strings.Contains(q, "JSONB"))
}

func ptr[T any](v T) *T { return &v }
