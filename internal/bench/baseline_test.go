package bench

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBaselineMatchesHTTP checks, on a small store of each kind, that the SQL
// the benchmarks time as the baseline returns the page the API returns.
func TestBaselineMatchesHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, kind, 3000, false)
			t.Cleanup(f.close)
			r := rand.New(rand.NewPCG(1, 2))
			check := func(q search) page {
				p, _, err := f.runHTTP(q)
				require.NoError(t, err)
				ids, err := f.runSQL(context.Background(), q)
				require.NoError(t, err)
				var got []string
				for _, d := range p.Data {
					got = append(got, d.ID)
				}
				require.Equal(t, got, ids, q.path())
				return p
			}
			for _, qm := range queries {
				t.Run(qm.name, func(t *testing.T) {
					hits := 0
					for range 20 {
						if p := check(qm.make(f, r)); len(p.Data) > 0 {
							hits++
						}
					}
					require.Positive(t, hits, "the searches should find something")
				})
			}
			t.Run("paging", func(t *testing.T) {
				q := search{limit: 100}
				for range 5 {
					p := check(q)
					require.NotNil(t, p.Next)
					q = search{limit: 100, cursor: *p.Next, after: p.Data[len(p.Data)-1].ID}
				}
			})
		})
	}
}
