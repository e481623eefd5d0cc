package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/provider/email/resend/resendfake"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/store"
)

// deliveryEngine is an engine that may reach the local fakes, on a clock the
// test advances past retry backoffs.
func (h *harness) deliveryEngine(clock *testClock) *engine.Engine {
	return h.newEngine(engine.Options{Now: clock.Now, Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true}})
}

// emailWorkflow sends an e-mail, then an in-app message.
func emailWorkflow(key string) map[string]any {
	return map[string]any{"name": "Mail " + key, "workflowId": key, "steps": []any{
		map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{
			"subject": "Hi {{subscriber.firstName}}", "body": `<p>Hello <b>{{subscriber.firstName}}</b>, <a href="https://x.test/{{payload.id}}">open</a></p>`}},
		map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "after the mail"}},
	}}
}

// sendgridIntegration creates an active SendGrid integration at a fake.
func (h *harness) sendgridIntegration(t *testing.T, f *sendgridfake.Fake, identifier string) map[string]any {
	t.Helper()
	creds := map[string]any(f.Credentials())
	return h.createIntegration(t, h.authFor(asDev), map[string]any{"providerId": "sendgrid", "identifier": identifier,
		"active": true, "credentials": creds})
}

// messages lists GET /v1/messages as the development key.
func (h *harness) messages(t testing.TB, q url.Values) map[string]any {
	t.Helper()
	res := h.call(t, h.authFor(asDev), "GET", "/v1/messages?"+q.Encode(), nil, nil)
	require.Equal(t, 200, res.Status, "%s", res.Raw)
	return res.Object(t)
}

func detailTexts(t *testing.T, job map[string]any) []string {
	t.Helper()
	var out []string
	for _, d := range objects(t, job["executionDetails"]) {
		out = append(out, d["detail"].(string))
	}
	return out
}

// jobsOf are the jobs of the one notification of a transaction.
func (h *harness) jobsOf(t *testing.T, transactionID string) []map[string]any {
	t.Helper()
	list := objects(t, h.events(t, url.Values{"transactionId": {transactionID}})["data"])
	require.Len(t, list, 1, transactionID)
	return objects(t, h.event(t, list[0]["_id"].(string))["jobs"])
}

func TestEmailDelivery(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := sendgridfake.New()
		defer f.Close()
		in := h.sendgridIntegration(t, f, "mail-main")
		h.createWorkflow(t, dev, emailWorkflow("welcome"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		clock := &testClock{t: time.Now().Add(time.Minute)} // ahead of the triggers: their jobs are due
		eng := h.deliveryEngine(clock)

		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "payload": map[string]any{"id": "42"}, "transactionId": "tx-mail",
			"overrides": map[string]any{"email": map[string]any{"to": []string{"boss@example.com"}, "replyTo": "help@example.com"},
				"providers": map[string]any{"sendgrid": map[string]any{"categories": []string{"welcome"}, "ip_pool_name": "general"}},
				"steps": map[string]any{"mail": map[string]any{"providers": map[string]any{"sendgrid": map[string]any{"ip_pool_name": "transactional",
					"_passthrough": map[string]any{"body": map[string]any{"asm": map[string]any{"group_id": 7}},
						"headers": map[string]any{"X-Herald-Test": "passed", "Bad Name": "dropped"}, "query": map[string]any{"trace": 1}}}}}}}})
		drain(t, eng)

		got := f.Received()
		require.Len(t, got, 1)
		d := got[0]
		require.Equal(t, []string{"ada@example.com", "boss@example.com"}, d.To, "overrides.email.to adds recipients")
		require.Equal(t, "Hi Ada", d.Subject)
		require.Equal(t, `<p>Hello <b>Ada</b>, <a href="https://x.test/42">open</a></p>`, d.HTML)
		require.Equal(t, "Hello Ada, open (https://x.test/42)", d.Text, "a plain-text part without tags")
		require.Equal(t, "help@example.com", d.ReplyTo)
		require.Equal(t, "noreply@herald.test", d.From)
		require.Contains(t, string(d.Body), `"categories":["welcome"]`, "overrides.providers.sendgrid merged into the request")
		require.Contains(t, string(d.Body), `"ip_pool_name":"transactional"`, "overrides.steps.<stepId>.providers win for their step")
		require.Contains(t, string(d.Body), `"asm":{"group_id":7}`, "_passthrough.body merged into the request as written")
		require.NotContains(t, string(d.Body), "_passthrough")
		require.Equal(t, "passed", d.Header.Get("X-Herald-Test"), "_passthrough.headers on the request")
		require.Equal(t, "1", d.Query.Get("trace"), "_passthrough.query on the request's URL")
		require.Len(t, d.Header.Values("Bad Name"), 0, "a header that cannot be sent is skipped")

		jobs := h.jobsOf(t, "tx-mail")
		require.Len(t, jobs, 2)
		mail := jobs[0]
		require.Equal(t, "completed", mail["status"])
		require.Equal(t, in["_id"], mail["_integrationId"], "the job carries the integration it used")
		require.Equal(t, []string{"Step queued", "Start sending message", "Integration instance selected", "Message created", "Message sent"},
			detailTexts(t, mail))
		require.Equal(t, "completed", jobs[1]["status"], "the workflow goes on")

		page := h.messages(t, url.Values{"channel": {"email"}, "transactionId": {"tx-mail"}})
		msgs := objects(t, page["data"])
		require.Len(t, msgs, 1)
		require.Equal(t, "sent", msgs[0]["status"])
		require.Equal(t, "sendgrid", msgs[0]["providerId"])
		require.Equal(t, d.MessageID, msgs[0]["providerMessageId"])
		require.Equal(t, in["_id"], msgs[0]["_integrationId"])
		require.Equal(t, "ada@example.com", msgs[0]["email"])
		require.Equal(t, "Hi Ada", msgs[0]["subject"])
		require.EqualValues(t, 1, page["totalCount"])
		require.Equal(t, false, page["hasMore"])
		all := h.messages(t, url.Values{"subscriberId": {"ada"}})
		require.Len(t, objects(t, all["data"]), 2, "e-mail and in-app messages")
		require.Empty(t, objects(t, h.messages(t, url.Values{"subscriberId": {"nobody"}})["data"]))

		// A re-run of the finished notification's jobs sends nothing more.
		drain(t, eng)
		require.Len(t, f.Received(), 1)
	})
}

func TestEmailRecipientMissing(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-main")
		h.createWorkflow(t, dev, emailWorkflow("welcome"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "noaddr", "firstName": "No"})
		eng := h.deliveryEngine(&testClock{t: time.Now().Add(time.Minute)})
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "noaddr", "transactionId": "tx-noaddr"})
		drain(t, eng)
		require.Zero(t, f.Requests())
		jobs := h.jobsOf(t, "tx-noaddr")
		require.Equal(t, "failed", jobs[0]["status"])
		require.Equal(t, []string{"Subscriber missing recipient details"}, detailTexts(t, jobs[0])[1:])
		require.Equal(t, "completed", jobs[1]["status"], "the workflow goes on to its next step")
	})
}

func TestEmailRetriesThenFailsOver(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		primary, spare := sendgridfake.New(), sendgridfake.New()
		defer primary.Close()
		defer spare.Close()
		h.sendgridIntegration(t, primary, "mail-primary")
		second := h.sendgridIntegration(t, spare, "mail-spare")
		h.createWorkflow(t, dev, emailWorkflow("welcome"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		clock := &testClock{t: time.Now().Add(time.Minute)} // ahead of the triggers: their jobs are due
		eng := h.deliveryEngine(clock)

		primary.Fail(providertest.Unavailable, 2)
		primary.Fail(providertest.RateLimited, 1)
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "transactionId": "tx-failover"})
		for range 6 {
			drain(t, eng)
			clock.Advance(10 * time.Second) // past the backoff and the Retry-After of 7 s
		}
		require.Equal(t, 3, primary.Requests(), "three attempts on the primary")
		require.Empty(t, primary.Received())
		require.Len(t, spare.Received(), 1, "then the spare delivers, once")

		mail := h.jobsOf(t, "tx-failover")[0]
		require.Equal(t, "completed", mail["status"])
		require.Equal(t, second["_id"], mail["_integrationId"])
		texts := strings.Join(detailTexts(t, mail), "\n")
		require.Equal(t, 2, strings.Count(texts, "Temporary provider error, retrying"), texts)
		require.Contains(t, texts, "Failing over to integration mail-spare (sendgrid) after 3 failed attempts on mail-primary")
		require.Contains(t, texts, "Message sent")
		for _, d := range objects(t, mail["executionDetails"]) {
			if strings.HasPrefix(d["detail"].(string), "Temporary provider error") {
				require.Equal(t, "Warning", d["status"])
			}
		}
	})
}

func TestEmailPermanentFailureAndPinnedIntegration(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		primary, spare := sendgridfake.New(), sendgridfake.New()
		defer primary.Close()
		defer spare.Close()
		h.sendgridIntegration(t, primary, "mail-primary")
		h.sendgridIntegration(t, spare, "mail-spare")
		h.createWorkflow(t, dev, emailWorkflow("welcome"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		clock := &testClock{t: time.Now().Add(time.Minute)} // ahead of the triggers: their jobs are due
		eng := h.deliveryEngine(clock)

		// Permanent: one request, failed at once, no failover.
		primary.Fail(providertest.Rejected, 1)
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "transactionId": "tx-rejected"})
		drain(t, eng)
		require.Equal(t, 1, primary.Requests())
		require.Zero(t, spare.Requests())
		mail := h.jobsOf(t, "tx-rejected")[0]
		require.Equal(t, "failed", mail["status"])
		details := objects(t, mail["executionDetails"])
		last := details[len(details)-1]
		require.Equal(t, "Unexpected provider error", last["detail"])
		require.Equal(t, "Failed", last["status"])
		require.Contains(t, last["raw"], "Does not contain a valid address")
		require.NotContains(t, last["raw"], "SG.fake-api-key", "no credential in what Herald keeps")
		msgs := objects(t, h.messages(t, url.Values{"transactionId": {"tx-rejected"}, "channel": {"email"}})["data"])
		require.Len(t, msgs, 1)
		require.Equal(t, "error", msgs[0]["status"])
		require.Contains(t, msgs[0]["errorText"], "Does not contain a valid address")

		// Pinned to the spare: transient failures are retried on it, never failed over.
		spare.Fail(providertest.Unavailable, 3)
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "transactionId": "tx-pinned",
			"overrides": map[string]any{"email": map[string]any{"integrationIdentifier": "mail-spare"}}})
		for range 6 {
			drain(t, eng)
			clock.Advance(10 * time.Second)
		}
		require.Equal(t, 1, primary.Requests(), "the primary saw nothing more")
		require.Equal(t, 3, spare.Requests())
		mail = h.jobsOf(t, "tx-pinned")[0]
		require.Equal(t, "failed", mail["status"])
		require.NotContains(t, strings.Join(detailTexts(t, mail), "\n"), "Failing over")

		// Pinned to an identifier no active integration has.
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "transactionId": "tx-unknown-pin",
			"overrides": map[string]any{"email": map[string]any{"integrationIdentifier": "nope"}}})
		drain(t, eng)
		require.Contains(t, detailTexts(t, h.jobsOf(t, "tx-unknown-pin")[0]), `No active email integration has the identifier "nope"`)
	})
}

func TestDeliveryRefusesPrivateNetworks(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-main")
		h.createWorkflow(t, dev, emailWorkflow("welcome"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		// The default: private networks refused. The fake is on loopback.
		eng := h.newEngine(engine.Options{})
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "transactionId": "tx-private"})
		drain(t, eng)
		require.Zero(t, f.Requests(), "refused before any connection")
		mail := h.jobsOf(t, "tx-private")[0]
		require.Equal(t, "failed", mail["status"], "a refusal is permanent: no retries")
		details := objects(t, mail["executionDetails"])
		require.Contains(t, details[len(details)-1]["raw"], "private-network guard")
	})
}

// crashingStore loses the outcomes of the first jobs it is asked to write,
// as a worker that dies between the provider's answer and the commit.
type crashingStore struct {
	store.Store
	lose atomic.Int32
}

func (s *crashingStore) JobFinish(ctx context.Context, outcomes []store.JobOutcome, now time.Time) ([]bool, error) {
	if s.lose.Add(-1) >= 0 {
		return nil, errors.New("the worker died before the commit")
	}
	return s.Store.JobFinish(ctx, outcomes, now)
}

func TestCrashMidSendIsNotASecondEmail(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := resendfake.New()
		defer f.Close()
		creds := map[string]any(f.Credentials())
		h.createIntegration(t, dev, map[string]any{"providerId": "resend", "identifier": "resend", "active": true, "credentials": creds})
		h.createWorkflow(t, dev, emailWorkflow("welcome"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "transactionId": "tx-crash"})

		// The send reaches Resend; the outcome (and its retry) never commits.
		crashing := &crashingStore{Store: h.DB}
		crashing.lose.Store(2)
		dying := engine.New(engine.Options{Store: crashing, Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
			Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true}})
		_, err := dying.RunOnce(context.Background())
		require.Error(t, err)
		require.Len(t, f.Received(), 1)

		// The lease expires, the job runs again: same idempotency key, no second e-mail.
		clock.Advance(time.Minute)
		n, err := h.DB.JobRescue(context.Background(), clock.Now())
		require.NoError(t, err)
		require.Equal(t, 1, n)
		drain(t, h.deliveryEngine(clock))
		require.Equal(t, 2, f.Requests(), "the re-run called Resend again")
		got := f.Received()
		require.Len(t, got, 1, "Resend recognised the key: one e-mail")
		mail := h.jobsOf(t, "tx-crash")[0]
		require.Equal(t, "completed", mail["status"])
		msgs := objects(t, h.messages(t, url.Values{"transactionId": {"tx-crash"}, "channel": {"email"}})["data"])
		require.Len(t, msgs, 1)
		require.Equal(t, got[0].MessageID, msgs[0]["providerMessageId"], "the first send's id")
	})
}

// TestDeliveriesOverlapWithinBounds: with a provider that takes 100 ms to
// answer, deliveries of successive batches overlap — a worker claims the
// next batch while the providers answer — up to the integration's
// configurations.maxConcurrency and never beyond; every message is sent
// once.
func TestDeliveriesOverlapWithinBounds(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := sendgridfake.New()
		defer f.Close()
		f.SetDelay(100 * time.Millisecond)
		creds := map[string]any(f.Credentials())
		res := h.call(t, dev, "POST", "/v1/integrations", map[string]any{"providerId": "sendgrid", "identifier": "slow",
			"active": true, "credentials": creds, "configurations": map[string]any{"maxConcurrency": 6}}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		bad := h.call(t, dev, "POST", "/v1/integrations", map[string]any{"providerId": "sendgrid", "identifier": "bad",
			"credentials": creds, "configurations": map[string]any{"maxConcurrency": 0}}, nil)
		require.Equal(t, 422, bad.Status, "%s", bad.Raw)
		require.Contains(t, string(bad.Raw), "configurations.maxConcurrency")
		h.createWorkflow(t, dev, map[string]any{"name": "Slow", "workflowId": "slow", "steps": []any{
			map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "Hi {{subscriber.firstName}}", "body": "x"}}}})
		const n = 36
		var to []any
		for i := range n {
			id := fmt.Sprintf("s%d", i)
			h.createSubscriber(t, dev, map[string]any{"subscriberId": id, "firstName": id, "email": id + "@example.com"})
			to = append(to, id)
		}
		h.trigger(t, dev, map[string]any{"name": "slow", "to": to})
		// Batches of 4: nine batches, which only overlap if a worker claims
		// while its last batch waits on the provider.
		eng := h.newEngine(engine.Options{Workers: 1, Batch: 4, MaxInFlight: 64, Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		start := time.Now()
		go func() { defer close(done); eng.Run(ctx) }()
		deadline := time.Now().Add(20 * time.Second)
		for len(f.Received()) < n && time.Now().Before(deadline) {
			<-time.After(10 * time.Millisecond)
		}
		took := time.Since(start)
		cancel()
		<-done
		got := f.Received()
		require.Len(t, got, n)
		seen := map[string]bool{}
		for _, d := range got {
			require.False(t, seen[d.To[0]], "sent twice to %s", d.To[0])
			seen[d.To[0]] = true
		}
		require.LessOrEqual(t, f.PeakConcurrency(), 6, "the integration's maxConcurrency bounds its calls in flight")
		require.Greater(t, f.PeakConcurrency(), 4, "calls of several batches overlap")
		require.Less(t, took, time.Duration(n)*100*time.Millisecond/3, "calls overlap rather than run in turn")
	})
}

// TestRateLimitHoldsTheIntegration: a 429 with Retry-After stops every call
// to that integration until it passes — the other deliveries wait in the
// queue instead of each earning a 429 — then all are sent.
func TestRateLimitHoldsTheIntegration(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := sendgridfake.New()
		defer f.Close()
		res := h.call(t, dev, "POST", "/v1/integrations", map[string]any{"providerId": "sendgrid", "identifier": "limited",
			"active": true, "credentials": map[string]any(f.Credentials()), "configurations": map[string]any{"maxConcurrency": 1}}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		h.createWorkflow(t, dev, map[string]any{"name": "Limited", "workflowId": "limited", "steps": []any{
			map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "Hi", "body": "x"}}}})
		var to []any
		for i := range 4 {
			id := fmt.Sprintf("r%d", i)
			h.createSubscriber(t, dev, map[string]any{"subscriberId": id, "email": id + "@example.com"})
			to = append(to, id)
		}
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.deliveryEngine(clock)
		f.Fail(providertest.RateLimited, 1)
		h.trigger(t, dev, map[string]any{"name": "limited", "to": to})
		drain(t, eng)
		require.Equal(t, 1, f.Requests(), "after the 429 no other call goes out before its Retry-After")
		require.Empty(t, f.Received())
		clock.Advance(3 * time.Second)
		drain(t, eng)
		require.Equal(t, 1, f.Requests(), "still within the Retry-After of 7 s")
		clock.Advance(10 * time.Second)
		for range 3 {
			drain(t, eng)
			clock.Advance(10 * time.Second)
		}
		require.Len(t, f.Received(), 4, "then every delivery goes, once")
		require.Equal(t, 5, f.Requests())
	})
}
