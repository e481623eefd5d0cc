package sqlstore_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestSubscriberSearchEmailWords holds e-mail searches that enclose whole
// words (answered on PostgreSQL through the e-mail words index) to plain
// case-sensitive substring semantics.
func TestSubscriberSearchEmailWords(t *testing.T) {
	t.Parallel()
	emails := []string{
		"diego.thomas.99999@wayne.test", "xdiego.thomas.99999@wayne.testing", "diego.thomas.9999@wayne.test",
		"Diego.Thomas.99999@Wayne.test", "diego.thomas.999990@wayne.test", "diego-thomas-99999@wayne.test",
		"jörg.müller@straße.de", "jorg.muller@strasse.de", "a+b@x.io", "a.b.c@x.io", "ab.c@x.io",
		"zoë.o'brien@ex-ample.org", "o'brien@example.org", "100%real.x@y.io", "100xreal.x@y.io", "dup.dup.dup@x.io",
	}
	queries := []string{
		"diego.thomas.99999@wayne.test", ".thomas.", "thomas.99999@", "@wayne.", ".Thomas.", "-thomas-",
		"jörg.müller@", ".müller@straße.", "ö", "+b@", ".b.", "a.b.c@x.io", "o'brien@ex-ample.", "-ample.",
		"%real.", "100%real.x@", "_real", ".dup.", "dup.dup.dup", "@x.", ".io",
	}
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		var subs []store.Subscriber
		for i, e := range emails {
			at := base.Add(time.Duration(i) * time.Second)
			subs = append(subs, store.Subscriber{ID: id.NewAt(at), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID,
				SubscriberID: fmt.Sprintf("s%02d", i), Email: ptr(e), CreatedAt: at, UpdatedAt: at})
		}
		require.NoError(t, db.SubscriberBulkLoad(ctx, subs))
		for _, q := range queries {
			var want []string
			for i, e := range emails {
				if strings.Contains(e, q) {
					want = append(want, fmt.Sprintf("s%02d", i))
				}
			}
			res, err := db.SubscriberSearch(ctx, &store.SubscriberSearchParams{Scope: tn.A, Email: ptr(q),
				OrderBy: store.OrderByID, Limit: 100})
			require.NoError(t, err, q)
			var got []string
			for _, s := range res.Subscribers {
				got = append(got, s.SubscriberID)
			}
			slices.Sort(got)
			require.Equal(t, want, got, "email contains %q", q)
			require.Equal(t, len(want), res.TotalCount, q)
		}
	})
}
