package seed

import (
	"context"
	"errors"
	"sync"

	"github.com/herald-notify/herald/internal/store"
)

// InsertFunc writes one batch of new subscribers, such as
// sqlstore.DB.SubscriberBulkLoad.
type InsertFunc func(ctx context.Context, subs []store.Subscriber) error

// LoadOptions say which subscribers Load writes and how.
type LoadOptions struct {
	// From is the first subscriber number; Count how many to write.
	From, Count int
	// Batch is the number of subscribers per insert (default 5000).
	Batch int
	// Workers is the number of batches generated and inserted at once
	// (default 2: one generates while another writes).
	Workers int
	// Progress, when set, is called after each batch with its size; calls
	// never overlap.
	Progress func(rows int)
}

// Load generates subscribers From..From+Count-1 of g and inserts them in
// batches. It stops at the first error.
func Load(ctx context.Context, g *Generator, insert InsertFunc, o LoadOptions) error {
	return loadBatches(ctx, g.Batch, insert, o)
}

// loadBatches generates rows From..From+Count-1 with gen and inserts them
// in batches of o.Batch from o.Workers goroutines, stopping at the first error.
func loadBatches[T any](ctx context.Context, gen func(dst []T, from, to int) []T,
	insert func(context.Context, []T) error, o LoadOptions) error {
	if o.Batch <= 0 {
		o.Batch = 5000
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	starts := make(chan int)
	go func() {
		defer close(starts)
		for from := o.From; from < o.From+o.Count; from += o.Batch {
			select {
			case starts <- from:
			case <-ctx.Done():
				return
			}
		}
	}()

	var wg sync.WaitGroup
	var mu sync.Mutex
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]T, 0, o.Batch)
			for from := range starts {
				buf = gen(buf[:0], from, min(from+o.Batch, o.From+o.Count))
				if err := insert(ctx, buf); err != nil {
					cancel(err)
					return
				}
				if o.Progress != nil {
					mu.Lock()
					o.Progress(len(buf))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}
