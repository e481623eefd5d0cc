package sqlstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// layoutWrites are the layout store's writes for TestEveryWriteTakesTheGate.
func (f *gateFixture) layoutWrites() map[string]gatedWrite {
	var doomed store.Layout
	layout := func(key string) store.Layout {
		return store.Layout{ID: id.New(), OrganizationID: f.scope.OrganizationID, EnvironmentID: f.env.ID, Key: key,
			Name: key, CreatedAt: f.at, UpdatedAt: f.at}
	}
	return map[string]gatedWrite{
		"LayoutCreate": {call: func(ctx context.Context) error {
			l := layout(id.New())
			return f.db.LayoutCreate(ctx, &l)
		}},
		"LayoutUpdate": {setup: func(t *testing.T) {
			doomed = layout(id.New())
			require.NoError(t, f.db.LayoutCreate(t.Context(), &doomed))
		}, call: func(ctx context.Context) error {
			l := doomed
			l.Name = "Renamed"
			return f.db.LayoutUpdate(ctx, &l)
		}},
		"LayoutDelete": {setup: func(t *testing.T) {
			first := layout(id.New()) // the default, if none yet
			require.NoError(t, f.db.LayoutCreate(t.Context(), &first))
			doomed = layout(id.New())
			require.NoError(t, f.db.LayoutCreate(t.Context(), &doomed))
			require.False(t, doomed.IsDefault)
		}, call: func(ctx context.Context) error {
			return f.db.LayoutDelete(ctx, &store.LayoutDeleteParams{Scope: f.scope, ID: doomed.ID, Now: f.at})
		}},
	}
}
