package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/store"
)

// The sender: one loop claims due attempts up to the free slots of the
// process's bound, each attempt runs in a goroutine of its own under the
// time limit, and a writer gathers their results and writes them a batch
// per transaction; a slot is freed once its result is written.

const (
	// claimBatch bounds one claim.
	claimBatch = 64
	// finishBatch bounds the results one transaction writes.
	finishBatch = 256
	// leaseMargins is how many time limits (Options.Timeout) beyond its
	// own a claimed attempt stays a sender's before another may claim it
	// again (45 s at the default 15 s).
	leaseMargins = 3
	// maxAnswer is how much of an answer's body is read (and discarded).
	maxAnswer = 64 << 10
	// pruneEvery is how often the sender prunes, and pruneKeep how many
	// answered attempts of each endpoint it keeps.
	pruneEvery = 10 * time.Minute
	pruneKeep  = 1000
	// pruneAfter is how long an event without attempts is kept.
	pruneAfter = time.Hour
)

// Send makes the due attempts until ctx ends: a worker process's loop.
func (s *Service) Send(ctx context.Context) {
	slots := make(chan struct{}, s.o.Concurrency)
	results := make(chan store.WebhookAttemptResult, s.o.Concurrency)
	var wg sync.WaitGroup
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		s.writeResults(results, slots)
	}()
	defer func() {
		wg.Wait()
		close(results)
		<-writerDone
	}()
	lastPrune := time.Time{}
	for {
		if ctx.Err() != nil {
			return
		}
		if now := s.now(); now.Sub(lastPrune) >= pruneEvery {
			lastPrune = now
			s.prune(ctx, now)
		}
		free := s.o.Concurrency - len(slots)
		if free == 0 {
			if !s.sleep(ctx, s.o.Poll) { // a result written frees a slot and wakes the loop
				return
			}
			continue
		}
		claimed, err := s.claim(ctx, min(free, claimBatch))
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("webhooks: claiming attempts", "err", err)
			}
			if !s.sleep(ctx, s.o.Poll) {
				return
			}
			continue
		}
		for _, c := range claimed {
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- s.attempt(ctx, c)
			}()
		}
		if len(claimed) == free && free > 0 {
			continue // more may be due
		}
		if len(claimed) > 0 {
			// A partial batch: under a stream of events, wait for the next
			// ones to gather — fewer, fuller claims on the store's writer.
			if !pause(ctx, linger) {
				return
			}
			continue
		}
		if !s.sleep(ctx, s.untilNext(ctx)) {
			return
		}
	}
}

func (s *Service) claim(ctx context.Context, limit int) (out []store.WebhookClaimed, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return s.o.Store.WebhookAttemptClaim(ctx, limit, (1+leaseMargins)*s.o.Timeout, s.now())
}

// untilNext is how long the sender may sleep: until the next attempt is
// due, at most the poll interval.
func (s *Service) untilNext(ctx context.Context) time.Duration {
	next, err := s.o.Store.WebhookNextDue(ctx)
	if err != nil || next.IsZero() {
		return s.o.Poll
	}
	return min(max(next.Sub(s.now()), time.Millisecond), s.o.Poll)
}

// linger is how long the sender waits after a partial claim, and its
// writer for more results, and the emitter for more in-app messages: a few
// milliseconds of latency for fuller batches.
const linger = 10 * time.Millisecond

// pause waits d, woken by nothing but ctx; false when ctx ended.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// sleep waits d or until woken; false when ctx ended.
func (s *Service) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-s.wake:
	case <-t.C:
	}
	return true
}

// writeResults writes the results as they come, a batch at a time, and
// frees their slots; it ends when results is closed.
func (s *Service) writeResults(results <-chan store.WebhookAttemptResult, slots chan struct{}) {
	for r := range results {
		batch := []store.WebhookAttemptResult{r}
		// Gather what comes within linger: one transaction for them all.
		deadline := time.NewTimer(linger)
	gather:
		for len(batch) < finishBatch {
			select {
			case r, ok := <-results:
				if !ok {
					break gather
				}
				batch = append(batch, r)
			case <-deadline.C:
				break gather
			}
		}
		deadline.Stop()
		s.finish(batch)
		for range batch {
			<-slots
		}
		s.signalWake()
	}
}

// finish writes a batch of results, trying a few times: results not
// written leave their attempts to be claimed again when the lease ends.
func (s *Service) finish(batch []store.WebhookAttemptResult) {
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 {
			time.Sleep(time.Duration(try) * 200 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = s.o.Store.WebhookAttemptFinish(ctx, batch, s.now())
		cancel()
		if err == nil {
			break
		}
	}
	if err != nil {
		s.log.Error("webhooks: writing attempts' results; they will be made again", "err", err, "count", len(batch))
		return
	}
	for _, r := range batch {
		switch {
		case r.Canceled:
		case r.Success:
			s.o.Metrics.WebhookAttempt(metrics.WebhookSuccess)
		case r.Disable:
			s.o.Metrics.WebhookAttempt(metrics.WebhookGone)
		case r.NextAttemptAt != nil:
			s.o.Metrics.WebhookAttempt(metrics.WebhookRetry)
		default:
			s.o.Metrics.WebhookAttempt(metrics.WebhookFailed)
		}
	}
}

// attempt makes one attempt. A panic fails the attempt, recorded on it.
func (s *Service) attempt(ctx context.Context, c store.WebhookClaimed) (r store.WebhookAttemptResult) {
	r.Attempt = c.Attempt
	if c.Endpoint.Disabled {
		r.Canceled = true
		return r
	}
	started := s.now()
	r.AttemptedAt = started
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("webhooks: an attempt panicked", "endpointId", c.Endpoint.ID, "eventId", c.Event.ID,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r.StatusCode, r.Success, r.Disable = nil, false, false
			r.Error = "Internal error: the attempt failed unexpectedly"
			r.NextAttemptAt = s.next(c.Attempt.Attempt, s.now())
		}
	}()
	code, problem := s.post(ctx, c, started)
	switch {
	case problem != "":
		r.Error = problem
	case code >= 200 && code < 300:
		r.StatusCode, r.Success = &code, true
		return r
	default:
		r.StatusCode = &code
		r.Error = fmt.Sprintf("The endpoint answered %d %s", code, http.StatusText(code))
		if code == http.StatusGone {
			r.Disable = true
			r.Error += ": the endpoint is disabled"
			return r
		}
	}
	r.NextAttemptAt = s.next(c.Attempt.Attempt, s.now())
	return r
}

// next is when the attempt after attempt n (1-based), which failed at
// failed, is due; nil when the schedule has no more.
func (s *Service) next(n int, failed time.Time) *time.Time {
	if n >= len(s.o.Schedule) {
		return nil
	}
	t := failed.Add(s.o.Schedule[n])
	return &t
}

// post sends the event to the endpoint, signed at now, and returns the
// answer's status, or why there was none.
func (s *Service) post(ctx context.Context, c store.WebhookClaimed, now time.Time) (int, string) {
	secrets := []string{c.Endpoint.Secret}
	if c.Endpoint.PreviousSecret != "" && c.Endpoint.PreviousUntil != nil && now.Before(*c.Endpoint.PreviousUntil) {
		secrets = append(secrets, c.Endpoint.PreviousSecret)
	}
	ts := now.Unix()
	sig, err := SignatureHeader(secrets, c.Event.ID, ts, c.Event.Body)
	if err != nil {
		return 0, "Internal error: the endpoint's secret cannot sign"
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint.URL, bytes.NewReader(c.Event.Body))
	if err != nil {
		return 0, "The endpoint's URL cannot be requested"
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Herald-Webhooks/1")
	req.Header.Set(HeaderID, c.Event.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, sig)
	res, err := s.client.Do(req)
	if err != nil {
		return 0, s.describe(ctx, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxAnswer))
	return res.StatusCode, ""
}

// describe says why an attempt got no answer, without the request's URL.
func (s *Service) describe(ctx context.Context, err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, netguard.ErrRefused):
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("No answer within %s", s.o.Timeout)
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return "Herald stopped before the endpoint answered"
	}
	var ue *url.Error
	if errors.As(err, &ue) { // leave its "Post <url>:" out
		err = ue.Err
	}
	return "No answer: " + err.Error()
}

// prune deletes what is no longer needed (see store.Webhooks.WebhookPrune).
func (s *Service) prune(ctx context.Context, now time.Time) {
	defer s.guard("pruning webhooks")
	if n, err := s.o.Store.WebhookPrune(ctx, pruneKeep, now.Add(-pruneAfter)); err != nil && ctx.Err() == nil {
		s.log.Warn("webhooks: pruning", "err", err)
	} else if n > 0 {
		s.log.Debug("webhooks: pruned", "rows", n)
	}
}
