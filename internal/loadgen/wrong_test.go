package loadgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/loadgen"
)

// fake is a server answering the load tool's requests, wrongly as told.
type fake struct {
	// trigger answers the n-th trigger (from 0): status and body; ok
	// says whether it is an accepted one.
	trigger func(n int64, tx string) (status int, body string, ok bool)
	// extra messages are added to every subscriber's count.
	extra int
	// feedBody, when set, is every feed page's body.
	feedBody string

	n        atomic.Int64
	mu       sync.Mutex
	accepted map[string]int      // subscriberId → accepted triggers
	txs      map[string][]string // subscriberId → its accepted transactions
	served   atomic.Int64        // accepted triggers answered
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	write := func(status int, body string) {
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
	path := r.URL.Path
	switch {
	case path == "/v2/workflows":
		write(201, `{"workflowId":"wf"}`)
	case path == "/v1/subscribers/bulk":
		var in struct {
			Subscribers []struct {
				SubscriberID string `json:"subscriberId"`
			} `json:"subscribers"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		created, _ := json.Marshal(in.Subscribers)
		write(201, `{"created":`+string(created)+`,"updated":[],"failed":[]}`)
	case path == "/v1/events/trigger":
		var in struct {
			To string `json:"to"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		n := f.n.Add(1) - 1
		tx := fmt.Sprintf("tx-%d", n)
		status, body, ok := f.trigger(n, tx)
		if ok {
			f.mu.Lock()
			f.accepted[in.To]++
			f.txs[in.To] = append(f.txs[in.To], tx)
			f.mu.Unlock()
			f.served.Add(1)
		}
		write(status, body)
	case path == "/v1/messages":
		write(200, fmt.Sprintf(`{"data":[],"totalCount":%d}`, len(r.URL.Query()["transactionId"])))
	case strings.HasSuffix(path, "/notifications/unseen"):
		sub := strings.Split(path, "/")[3]
		f.mu.Lock()
		n := f.accepted[sub]
		f.mu.Unlock()
		write(200, fmt.Sprintf(`{"count":%d}`, n+f.extra))
	case strings.HasSuffix(path, "/notifications/feed"):
		if f.feedBody != "" {
			write(200, f.feedBody)
			return
		}
		sub := strings.Split(path, "/")[3]
		f.mu.Lock()
		txs := f.txs[sub]
		f.mu.Unlock()
		var items []string
		for i := len(txs) - 1; i >= 0 && len(items) < 20; i-- {
			items = append(items, `{"_id":"m","transactionId":"`+txs[i]+`"}`)
		}
		write(200, fmt.Sprintf(`{"data":[%s],"totalCount":%d,"hasMore":false,"pageSize":%d,"page":0}`,
			strings.Join(items, ","), len(txs), len(items)))
	default:
		write(404, `{"statusCode":404}`)
	}
}

func good(tx string) string {
	return `{"acknowledged":true,"status":"processed","transactionId":"` + tx + `"}`
}

// TestRunCountsWrongAnswers checks that every kind of wrong answer is an
// error of the report, and that the right ones are still counted.
func TestRunCountsWrongAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		f     *fake
		wait  time.Duration // the delivery timeout (default 5 s)
		check func(t *testing.T, r *loadgen.Report, f *fake)
	}{{
		name: "every third trigger a 500, every third not acknowledged",
		f: &fake{trigger: func(n int64, tx string) (int, string, bool) {
			switch n % 3 {
			case 0:
				return 500, `{"statusCode":500,"message":"Internal server error"}`, false
			case 1:
				return 201, `{"acknowledged":false,"status":"error","transactionId":"` + tx + `"}`, false
			}
			return 201, good(tx), true
		}},
		check: func(t *testing.T, r *loadgen.Report, f *fake) {
			require.Positive(t, r.TriggerErrors["trigger: status 500"])
			require.Positive(t, r.TriggerErrors["trigger: acknowledged is not true"])
			require.Equal(t, int(f.served.Load()), r.Accepted)
			require.Equal(t, r.Sent, r.Accepted+r.TriggerErrors["trigger: status 500"]+r.TriggerErrors["trigger: acknowledged is not true"])
			require.Equal(t, r.Accepted, r.Delivered)
			require.Empty(t, r.DeliveryError)
			require.Equal(t, r.Sent-r.Accepted, r.Errors())
		},
	}, {
		name: "2xx with bodies of the wrong shape",
		f: &fake{trigger: func(n int64, tx string) (int, string, bool) {
			switch n % 4 {
			case 0:
				return 201, `not json`, false
			case 1:
				return 201, `{"acknowledged":true,"status":"processed"}`, false
			case 2:
				return 200, `{"acknowledged":true,"status":"trigger_not_active","transactionId":"` + tx + `"}`, false
			}
			return 201, good(tx), true
		}},
		check: func(t *testing.T, r *loadgen.Report, f *fake) {
			require.Positive(t, r.TriggerErrors["trigger: body is not a trigger answer"])
			require.Positive(t, r.TriggerErrors["trigger: no transactionId"])
			require.Positive(t, r.TriggerErrors[`trigger: status "trigger_not_active", not "processed"`])
			require.Equal(t, int(f.served.Load()), r.Accepted)
			require.Equal(t, r.Sent-r.Accepted, r.Errors())
		},
	}, {
		name: "a message more than triggered",
		f:    &fake{extra: 1, trigger: func(_ int64, tx string) (int, string, bool) { return 201, good(tx), true }},
		check: func(t *testing.T, r *loadgen.Report, _ *fake) {
			require.Contains(t, r.DeliveryError, "more than triggers accepted")
			require.Positive(t, r.Errors())
		},
	}, {
		name: "a message missing",
		f:    &fake{extra: -1, trigger: func(_ int64, tx string) (int, string, bool) { return 201, good(tx), true }},
		wait: 300 * time.Millisecond,
		check: func(t *testing.T, r *loadgen.Report, _ *fake) {
			require.Contains(t, r.DeliveryError, fmt.Sprintf("%d of %d messages in the feeds", r.Delivered, r.Accepted))
			require.Less(t, r.Delivered, r.Accepted)
			require.Equal(t, 1, r.Errors())
		},
	}, {
		name: "feed pages of the wrong shape",
		f: &fake{feedBody: `{"data":null}`, trigger: func(_ int64, tx string) (int, string, bool) {
			return 201, good(tx), true
		}},
		check: func(t *testing.T, r *loadgen.Report, _ *fake) {
			require.Zero(t, len(r.TriggerErrors))
			require.Positive(t, r.FeedErrors["feed: body is not a feed page"])
			require.Positive(t, r.ProbeErrors["feed: body is not a feed page"])
			require.Zero(t, r.FeedReads)
			require.Equal(t, r.FeedErrors["feed: body is not a feed page"]+r.ProbeErrors["feed: body is not a feed page"], r.Errors())
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.f.accepted, c.f.txs = map[string]int{}, map[string][]string{}
			srv := httptest.NewServer(c.f)
			t.Cleanup(srv.Close)
			if c.wait == 0 {
				c.wait = 5 * time.Second
			}
			r, err := loadgen.Run(context.Background(), loadgen.Config{URL: srv.URL, APIKey: "k", Subscribers: 20, Clients: 4,
				Duration: 300 * time.Millisecond, Probes: 1, FeedDuration: 200 * time.Millisecond, DeliveryTimeout: c.wait})
			require.NoError(t, err)
			require.Positive(t, r.Sent)
			c.check(t, r, c.f)
		})
	}
}

// TestRunRefusesAServerThatAcceptsNothing checks that a run with no
// accepted trigger is an error, not a report of zero rates.
func TestRunRefusesAServerThatAcceptsNothing(t *testing.T) {
	t.Parallel()
	f := &fake{accepted: map[string]int{}, txs: map[string][]string{},
		trigger: func(int64, string) (int, string, bool) { return 401, `{"statusCode":401}`, false }}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	r, err := loadgen.Run(context.Background(), loadgen.Config{URL: srv.URL, APIKey: "k", Subscribers: 5, Clients: 2,
		Duration: 100 * time.Millisecond, FeedDuration: 100 * time.Millisecond})
	require.ErrorContains(t, err, "no trigger was accepted")
	require.Positive(t, r.TriggerErrors["trigger: status 401"])
}
