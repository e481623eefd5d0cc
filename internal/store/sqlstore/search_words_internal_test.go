package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEnclosedWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, v string
		want    []string
	}{
		{"whole address", "diego.thomas.99999@wayne.test", []string{"thomas", "99999", "wayne"}},
		{"edges are partial", "thomas", nil},
		{"two pieces", "ada@example", nil},
		{"leading separator", ".thomas.", []string{"thomas"}},
		{"separator runs", "a..b--c", []string{"b"}},
		{"multi-byte separators", "jörg.müller@straße.de", []string{"rg", "m", "ller", "stra", "e"}},
		{"only separators", "@.", nil},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, enclosedWords(tc.v))
		})
	}
}
