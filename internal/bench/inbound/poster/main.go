// Command poster is the load generator of the inbound delivery-event
// benchmark (internal/bench/inbound/run.sh), from outside the server over
// HTTP: it makes a SendGrid integration (pointed at the provider fakes,
// taking signed events with a key it generates), sends N e-mails through
// it, then posts a `delivered` event for each — signed as SendGrid signs,
// in batches — and polls until every event is recorded: the messages'
// deliveredAt are checked one by one. It prints what it measured; a wrong
// answer or a lost event fails it.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// eventBase is the first event's time; event i happens i seconds later.
const eventBase = 1924873766

type client struct {
	url, key string
	http     *http.Client
}

// do sends a request and decodes a JSON answer into out (nil: none); a
// status other than want fails the run.
func (c *client) do(method, path string, body any, headers map[string]string, want int, out any) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			log.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" && !strings.HasPrefix(path, "/v2/inbound-webhooks/") {
		req.Header.Set("Authorization", "ApiKey "+c.key)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		log.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		log.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			log.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

type message struct {
	ID          string   `json:"_id"`
	ProviderID  string   `json:"providerMessageId"`
	Status      string   `json:"status"`
	DeliveredAt []string `json:"deliveredAt"`
}

// messages pages through the environment's e-mail messages.
func (c *client) messages() []message {
	var all []message
	for page := 0; ; page++ {
		var res struct {
			Data    []message `json:"data"`
			HasMore bool      `json:"hasMore"`
		}
		c.do("GET", "/v1/messages?channel=email&limit=1000&page="+strconv.Itoa(page), nil, nil, 200, &res)
		all = append(all, res.Data...)
		if !res.HasMore || len(res.Data) == 0 {
			return all
		}
	}
}

// recorded reads herald_delivery_events_total{outcome="recorded"} from /metrics.
func (c *client) recorded() int {
	req, _ := http.NewRequest("GET", c.url+"/metrics", nil)
	res, err := c.http.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "herald_delivery_events_total{") && strings.Contains(line, `outcome="recorded"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	return n
}

func main() {
	url := flag.String("url", "http://127.0.0.1:3999", "Herald's URL")
	key := flag.String("key", os.Getenv("HERALD_API_KEY"), "an API key of the development environment")
	credsFile := flag.String("creds", "", "the provider fakes' credentials (their first line of output)")
	events := flag.Int("events", 10_000, "e-mails sent, and delivered events posted")
	batch := flag.Int("batch", 1000, "events per post")
	conc := flag.Int("concurrency", 1, "posts in flight")
	flag.Parse()
	c := &client{url: strings.TrimRight(*url, "/"), key: *key, http: &http.Client{Timeout: time.Minute}}

	var creds map[string]map[string]any
	raw, err := os.ReadFile(*credsFile)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(raw, &creds); err != nil {
		log.Fatal(err)
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		log.Fatal(err)
	}
	var in struct {
		ID            string `json:"_id"`
		EnvironmentID string `json:"_environmentId"`
	}
	c.do("POST", "/v1/integrations", map[string]any{"providerId": "sendgrid", "active": true, "credentials": creds["sendgrid"],
		"configurations": map[string]any{"inboundWebhookEnabled": true,
			"inboundWebhookSigningKey": base64.StdEncoding.EncodeToString(der)}}, nil, 201, &in)
	c.do("POST", "/v2/workflows", map[string]any{"name": "Receipt", "workflowId": "receipt", "steps": []any{map[string]any{
		"name": "mail", "type": "email", "controlValues": map[string]any{"subject": "Receipt {{ payload.n }}", "body": "<p>Paid.</p>"}}}},
		nil, 201, nil)
	subs := make([]any, 0, 500)
	for i := range 500 {
		subs = append(subs, map[string]any{"subscriberId": fmt.Sprintf("sub-%d", i), "email": fmt.Sprintf("sub-%d@bench.test", i)})
	}
	c.do("POST", "/v1/subscribers/bulk", map[string]any{"subscribers": subs}, nil, 201, nil)
	for start := 0; start < *events; start += 100 {
		evs := make([]any, 0, 100)
		for i := start; i < min(start+100, *events); i++ {
			evs = append(evs, map[string]any{"name": "receipt", "to": fmt.Sprintf("sub-%d", i%500), "payload": map[string]any{"n": i}})
		}
		c.do("POST", "/v1/events/trigger/bulk", map[string]any{"events": evs}, nil, 201, nil)
	}
	sendStart := time.Now()
	var msgs []message
	for deadline := time.Now().Add(5 * time.Minute); ; {
		msgs = c.messages()
		if len(msgs) >= *events || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Read again once all are written: pages read while messages were
	// being written may hold some twice and miss others.
	msgs = c.messages()
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.ID] || m.Status != "sent" || m.ProviderID == "" {
			log.Fatalf("message %s: listed twice, or not sent (%s, providerMessageId %q)", m.ID, m.Status, m.ProviderID)
		}
		seen[m.ID] = true
	}
	if len(msgs) != *events {
		log.Fatalf("%d e-mails sent of %d", len(msgs), *events)
	}
	fmt.Printf("sent %d e-mails through the SendGrid fake in %.1f s\n", len(msgs), time.Since(sendStart).Seconds())
	sort.Slice(msgs, func(i, j int) bool { return msgs[i].ID < msgs[j].ID })
	want := make(map[string]string, len(msgs)) // message id → deliveredAt expected

	// The batches: every event a `delivered` one, half matched by Herald's
	// id (custom_args), half by SendGrid's message id.
	var bodies [][]byte
	for start := 0; start < len(msgs); start += *batch {
		var items []map[string]any
		for i := start; i < min(start+*batch, len(msgs)); i++ {
			m := msgs[i]
			ev := map[string]any{"email": "x@bench.test", "timestamp": eventBase + i, "event": "delivered",
				"sg_event_id": "bench-" + m.ID, "sg_message_id": m.ProviderID + ".filter0001.16648.5515E0B88.0", "response": "250 OK"}
			if i%2 == 0 {
				ev["heraldMessageId"] = m.ID
			}
			items = append(items, ev)
			want[m.ID] = time.Unix(int64(eventBase+i), 0).UTC().Format("2006-01-02T15:04:05.000Z")
		}
		b, _ := json.Marshal(items)
		bodies = append(bodies, b)
	}
	sign := func(body []byte) map[string]string {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		sum := sha256.Sum256(append([]byte(ts), body...))
		sig, err := ecdsa.SignASN1(rand.Reader, priv, sum[:])
		if err != nil {
			log.Fatal(err)
		}
		return map[string]string{"X-Twilio-Email-Event-Webhook-Signature": base64.StdEncoding.EncodeToString(sig),
			"X-Twilio-Email-Event-Webhook-Timestamp": ts}
	}
	signed := make([]map[string]string, len(bodies))
	for i, b := range bodies {
		signed[i] = sign(b) // before the clock starts: SendGrid's signing is not Herald's time
	}
	path := "/v2/inbound-webhooks/delivery-providers/" + in.EnvironmentID + "/" + in.ID
	before := c.recorded()
	var mu sync.Mutex
	var slowest time.Duration
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				var ans struct{ Queued int }
				c.do("POST", path, bodies[i], signed[i], 200, &ans)
				d := time.Since(t0)
				mu.Lock()
				slowest = max(slowest, d)
				mu.Unlock()
			}
		}()
	}
	for i := range bodies {
		next <- i
	}
	close(next)
	wg.Wait()
	accepted := time.Since(start)
	for deadline := time.Now().Add(2 * time.Minute); c.recorded()-before < len(msgs); {
		if time.Now().After(deadline) {
			log.Fatalf("%d of %d events recorded after 2 minutes", c.recorded()-before, len(msgs))
		}
		time.Sleep(20 * time.Millisecond)
	}
	recorded := time.Since(start)
	wrong := 0
	for _, m := range c.messages() {
		if w, ok := want[m.ID]; ok && (len(m.DeliveredAt) != 1 || m.DeliveredAt[0] != w) {
			wrong++
		}
	}
	if wrong > 0 {
		log.Fatalf("%d messages without their event's deliveredAt", wrong)
	}
	fmt.Printf("accepted %d events in %d posts of %d (%d in flight) in %.3f s = %.0f events/s (slowest post %d ms)\n",
		len(msgs), len(bodies), *batch, *conc, accepted.Seconds(), float64(len(msgs))/accepted.Seconds(), slowest.Milliseconds())
	fmt.Printf("all %d recorded %.3f s after the first post = %.0f events/s end to end; every message's deliveredAt checked\n",
		len(msgs), recorded.Seconds(), float64(len(msgs))/recorded.Seconds())

	// A batch of 100 `open` events, as SendGrid posts them: its answer time.
	var items []map[string]any
	for i := range 100 {
		items = append(items, map[string]any{"event": "open", "sg_event_id": fmt.Sprintf("open-%d", i), "heraldMessageId": msgs[i].ID,
			"timestamp": eventBase + i})
	}
	b, _ := json.Marshal(items)
	h := sign(b)
	t0 := time.Now()
	c.do("POST", path, b, h, 200, nil)
	fmt.Printf("a batch of 100 events answered in %.1f ms\n", float64(time.Since(t0).Microseconds())/1000)
}
