package engine

import (
	"context"
	"time"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

// SendTest makes one delivery of m through an integration, outside any
// workflow (the dashboard's Send test): the sender is built as the workers
// build theirs (the registry entry, the credentials checked, the network
// guard, the provider timeout), used once and closed. The answer is the
// provider's, or its *provider.Error.
func SendTest(ctx context.Context, o DeliveryOptions, in store.Integration, m *provider.Message) (*provider.Result, error) {
	o.defaults()
	ss := newSenders(o, time.Now)
	defer ss.close()
	e, err := ss.get(in)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	return e.s.Send(ctx, m)
}
