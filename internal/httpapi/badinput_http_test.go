package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/httpapi/openapitest"
	"github.com/herald-notify/herald/internal/secret"
)

// TestBadInputSweep drives every route with bad input in every position —
// invalid UTF-8, NUL, lone surrogates, huge numbers, deep and wide JSON,
// oversized strings and arrays, wrong types, unknown enumeration values, bad
// paging, SQL/LIKE metacharacters, bad headers, and CR/LF/NUL on the wire —
// and asserts, on both stores: never a 5xx; every 4xx in the error shape
// and the OpenAPI document; text a store cannot hold always refused; a
// refused write leaves the database as it was; the server still answering;
// and both stores answering every request with the same status.
//
//	go test ./internal/httpapi -run TestBadInputSweep -v
func TestBadInputSweep(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	statuses := map[string]map[string]int{} // store → case → status
	t.Cleanup(func() {
		sqlite, pg := statuses["sqlite"], statuses["postgres"]
		if sqlite == nil || pg == nil {
			return
		}
		var differ []string
		for name, st := range sqlite {
			if pg[name] != st {
				differ = append(differ, fmt.Sprintf("%s: sqlite %d, postgres %d", name, st, pg[name]))
			}
		}
		sort.Strings(differ)
		if len(differ) > 0 {
			t.Errorf("%d requests answered differently by the two stores:\n%s", len(differ), strings.Join(differ[:min(len(differ), 40)], "\n"))
		}
		require.Equal(t, len(sqlite), len(pg), "both stores got the same requests")
	})
	forEachStore(t, func(t *testing.T, h *harness) {
		start := time.Now()
		sw := newSweep(t, h)
		sw.requireEveryRoute()
		for _, rt := range sweepRoutes {
			sw.route(rt)
		}
		sw.wire()
		mu.Lock()
		statuses[h.DB.Dialect()] = sw.statuses
		mu.Unlock()
		sw.report(time.Since(start))
	})
}

// sweep is the state of one store's run.
type sweep struct {
	t         *testing.T
	h         *harness
	auth      string
	vars      map[string]string
	n         int            // numbers the requests, for unique ids in bodies
	counts    map[string]int // requests per class
	statuses  map[string]int // case → status
	failures  int
	server5xx map[string]int // 5xx answers per class
	last      string         // the database fingerprint after the last write
}

func newSweep(t *testing.T, h *harness) *sweep {
	sw := &sweep{t: t, h: h, auth: h.authFor(asDev), counts: map[string]int{}, statuses: map[string]int{}, server5xx: map[string]int{}}
	sw.vars = sweepFixtures(t, h)
	return sw
}

// sweepFixtures creates what the routes' valid values name.
func sweepFixtures(t *testing.T, h *harness) map[string]string {
	dev := h.authFor(asDev)
	eng := h.newEngine(engine.Options{})
	for _, sid := range []string{"sw-sub", "sw-victim"} {
		h.createSubscriber(t, dev, map[string]any{"subscriberId": sid, "firstName": "Sw", "email": sid + "@example.com"})
	}
	h.createIntegration(t, dev, map[string]any{"providerId": "fcm", "identifier": "sw-fcm", "active": true})
	for _, sid := range []string{"sw-sub", "sw-victim"} {
		res := h.call(t, dev, "PATCH", credPath(sid), map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{"t0"}}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
	}
	vars := map[string]string{}
	fb := newFakeBridge(t, h.DevKey)
	vars["bridgeUrl"] = fb.URL()
	res := h.call(t, dev, "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": fb.URL()}, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	for name, identifier := range map[string]string{"putIntegration": "sw-put", "primaryIntegration": "sw-primary", "victimIntegration": "sw-victim"} {
		vars[name] = h.createIntegration(t, dev, map[string]any{"providerId": "sendgrid", "identifier": identifier,
			"credentials": map[string]any{"apiKey": "SG.sweep", "from": "sweep@example.com"}})["_id"].(string)
	}
	for _, key := range []string{"sw-flow", "sw-put-flow", "sw-victim-flow"} {
		h.createWorkflow(t, dev, map[string]any{"name": key, "workflowId": key, "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Hello"}}}})
	}
	for _, tx := range []string{"sw-tx-fixture", "sw-tx-victim", "sw-tx-cancel", "sw-tx-doomed"} {
		h.trigger(t, dev, map[string]any{"name": "sw-flow", "to": "sw-sub", "transactionId": tx, "payload": map[string]any{"x": "y"}})
	}
	drain(t, eng)
	for _, it := range h.feedItems(t, "sw-sub") {
		switch it["transactionId"] {
		case "sw-tx-fixture":
			vars["message"] = it["_id"].(string)
		case "sw-tx-victim":
			vars["victimMessage"] = it["_id"].(string)
		}
	}
	for _, key := range []string{"sw-topic", "sw-topic-unsub", "sw-topic-doomed"} {
		res := h.call(t, dev, "POST", "/v2/topics/"+key+"/subscriptions", map[string]any{"subscriptions": []string{"sw-sub"}}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		vars["topicCursor"] = objects(t, res.Object(t)["data"])[0]["topic"].(map[string]any)["_id"].(string)
	}
	vars["notification"] = objects(t, h.events(t, url.Values{"transactionId": {"sw-tx-fixture"}})["data"])[0]["_id"].(string)
	inboxSweepFixtures(t, h, eng, vars)
	layoutSweepFixtures(t, h)
	environmentSweepFixtures(t, h, vars)
	envCtxSweepFixtures(t, h, vars)
	webhookSweepFixtures(t, h, vars)
	inboundSweepFixtures(t, h, vars)
	next, _ := h.call(t, dev, "GET", "/v2/subscribers?limit=1", nil, nil).Object(t)["next"].(string)
	vars["cursor"] = next
	vars["appIdentifier"], _ = h.call(t, dev, "GET", "/v1/environments/me", nil, nil).Object(t)["identifier"].(string)
	vars["subscriberHash"] = secret.SubscriberHash(h.DevKey, "sw-sub")
	// The /v1/inbox routes take the Bearer token of a session of sw-sub.
	res = h.call(t, "", "POST", "/v1/inbox/session", map[string]any{"applicationIdentifier": vars["appIdentifier"],
		"subscriberHash": vars["subscriberHash"], "subscriber": map[string]any{"subscriberId": "sw-sub"}}, nil)
	require.Equal(t, 201, res.Status, "%s", res.Raw)
	vars["inboxToken"] = res.Object(t)["data"].(map[string]any)["token"].(string)
	require.NotEmpty(t, vars["appIdentifier"])
	require.NotEmpty(t, vars["message"])
	require.NotEmpty(t, vars["victimMessage"])
	require.NotEmpty(t, vars["cursor"])
	return vars
}

// requireEveryRoute proves the sweep covers every registered route, and
// that every route is in the OpenAPI document.
func (sw *sweep) requireEveryRoute() {
	registered := httpapi.RoutePatterns(sw.h.Handler.(*httpapi.Server))
	var swept []string
	for _, rt := range sweepRoutes {
		swept = append(swept, rt.pattern)
	}
	require.ElementsMatch(sw.t, registered, swept, "every route registered in routes() needs a sweepRoute")
	router, err := openapitest.Router()
	require.NoError(sw.t, err)
	for _, p := range registered {
		method, path, _ := strings.Cut(p, " ")
		probe := httptest.NewRequest(method, regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "x"), nil)
		_, _, err := router.FindRoute(probe)
		require.NoError(sw.t, err, "route %s is not in the OpenAPI document", p)
	}
}

// request is one request of the sweep.
type request struct {
	class, name string
	method      string
	target      string // path?query, percent-encoded
	body        []byte // nil: none
	headers     map[string]string
	ignoredBody bool // sent to a route that reads no body
}

// route sends every bad variant of every position of one route.
func (sw *sweep) route(rt sweepRoute) {
	method, pathTemplate, _ := strings.Cut(rt.pattern, " ")
	params := map[string]string{}
	for k, v := range rt.params {
		params[k] = url.PathEscape(fill(v, sw.vars))
	}
	path := func(override map[string]string) string {
		return regexp.MustCompile(`\{([^}.]+)(\.\.\.)?\}`).ReplaceAllStringFunc(pathTemplate, func(m string) string {
			name := strings.Trim(m, "{}.")
			if v, ok := override[name]; ok {
				return v
			}
			return params[name]
		})
	}
	query := func(key, raw string) string {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(rt.query)) {
			if k != key {
				parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(fill(rt.query[k], sw.vars)))
			}
		}
		if key != "" {
			parts = append(parts, key+"="+raw) // both percent-encoded already
		}
		if len(parts) == 0 {
			return ""
		}
		return "?" + strings.Join(parts, "&")
	}
	valid := []byte(fill(rt.body, sw.vars))
	var body []byte
	if rt.body != "" {
		body = valid
	}
	var form map[string]string // a multipart route's Content-Type
	if rt.form != "" {
		body, form = []byte(fill(rt.form, sw.vars)), map[string]string{"Content-Type": "multipart/form-data; boundary=sweep"}
	}
	send := func(class, name, target string, b []byte, headers map[string]string) {
		if form != nil {
			headers = maps.Clone(headers)
			if headers == nil {
				headers = map[string]string{}
			}
			if _, set := headers["Content-Type"]; !set {
				maps.Copy(headers, form)
			}
		}
		sw.send(request{class: class, name: rt.pattern + " " + name, method: method, target: target, body: b, headers: headers})
	}
	sw.last = sw.fingerprint()

	// The valid request itself, so that the sweep knows the route works.
	send("valid", "valid", path(nil)+query("", ""), body, nil)

	// Path parameters.
	for _, name := range slices.Sorted(maps.Keys(rt.params)) {
		for _, v := range textVariants() {
			send(v.class, "path "+name+" "+v.name, path(map[string]string{name: v.v})+query("", ""), body, nil)
		}
	}
	// Query parameters, known ones and an unknown one.
	keys := append(slices.Sorted(maps.Keys(rt.query)), "sweepUnknown")
	for _, key := range keys {
		variants := textVariants()
		if slices.Contains(rt.paging, key) {
			variants = append(variants, pagingVariants...)
		}
		if slices.Contains(rt.enums, key) {
			variants = append(variants, enumVariants...)
		}
		if slices.Contains(rt.lists, key) {
			variants = append(variants, listVariants(url.QueryEscape(fill(rt.query[key], sw.vars)))...)
		}
		if key == "payload" {
			variants = append(variants, feedPayloadVariants...)
		}
		for _, v := range variants {
			send(v.class, "query "+key+" "+v.name, path(nil)+query(key, v.v), body, nil)
		}
	}
	for _, v := range []variant{{classUTF8, "key-ff", "%FF"}, {classNUL, "key-nul", "a%00"}, {classSurrogate, "key-cesu", "%ED%B0%80"}} {
		send(v.class, "query-key "+v.name, path(nil)+query(v.v, "1"), body, nil)
	}
	// List parameters sent repeated, and with [].
	for _, key := range rt.lists {
		one := url.QueryEscape(fill(rt.query[key], sw.vars))
		rep := strings.TrimSuffix(strings.Repeat(key+"="+one+"&", 101), "&")
		send(classArray, "query "+key+" 101-repeated", path(nil)+query(key, one)+"&"+rep, body, nil)
		send(classArray, "query "+key+"[] 101", path(nil)+query(key, one)+"&"+strings.ReplaceAll(rep, key+"=", url.QueryEscape(key+"[]")+"="), body, nil)
	}
	// Headers.
	for _, hv := range headerVariants(sw.h.DevKey) {
		headers := map[string]string{hv.header: hv.value}
		send(classHeader, "header "+hv.name, path(nil)+query("", ""), body, headers)
	}
	// Bodies.
	if method == http.MethodGet {
		return
	}
	for _, v := range wholeBodyVariants {
		// A route that takes no body ignores one that is not JSON; a JSON one meets the edge's rules.
		sw.send(request{class: v.class, name: rt.pattern + " body " + v.name, method: method, target: path(nil) + query("", ""),
			body: []byte(v.v), ignoredBody: rt.body == "" && !json.Valid([]byte(v.v))})
	}
	if rt.body == "" {
		return
	}
	positions := bodyPositions(valid)
	for _, pos := range positions {
		name := pathName(pos.path)
		for _, v := range bodyValueVariants(pos.value, len(pos.path)) {
			send(v.class, "body "+name+" "+v.name, path(nil)+query("", ""), replaceAt(valid, pos.path, v.v, false), nil)
		}
		for _, n := range []int{101, 10_000} {
			if grown := growArray(valid, pos.path, n); grown != nil {
				send(classArray, fmt.Sprintf("body %s %d-items", name, n), path(nil)+query("", ""), grown, nil)
			}
		}
		if slices.Contains(rt.bodyEnums, name) {
			for _, v := range []string{`"NOPE"`, `""`, `"READ"`, `"in_app "`} {
				send(classEnum, "body "+name+" "+v, path(nil)+query("", ""), replaceAt(valid, pos.path, v, false), nil)
			}
		}
	}
	for _, pos := range append([]position{{path: []any{}}}, positions...) {
		for _, v := range bodyKeyVariants {
			if b := replaceAt(valid, pos.path, v.v, true); b != nil {
				send(v.class, "body-key "+pathName(pos.path)+" "+v.name, path(nil)+query("", ""), b, nil)
			}
		}
	}
}

// send runs one request in process and checks its answer.
func (sw *sweep) send(rq request) {
	sw.n++
	body := rq.body
	if body != nil {
		body = bytes.ReplaceAll(body, []byte("#N#"), []byte(strconv.Itoa(sw.n)))
	}
	req := httptest.NewRequest(rq.method, rq.target, bytes.NewReader(body))
	if body == nil {
		req = httptest.NewRequest(rq.method, rq.target, nil)
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", sw.auth)
	if strings.HasPrefix(rq.target, "/v1/inbox/") && !strings.HasPrefix(rq.target, "/v1/inbox/session") {
		req.Header.Set("Authorization", "Bearer "+sw.vars["inboxToken"])
	}
	for k, v := range rq.headers {
		req.Header[k] = []string{v} // as sent: no canonical checks in process
	}
	res := sw.h.serve(req)
	sw.counts[rq.class]++
	if _, dup := sw.statuses[rq.name]; dup {
		sw.t.Fatalf("two sweep requests are named %q", rq.name)
	}
	sw.statuses[rq.name] = res.Status
	sw.check(rq, req, res)
	if rq.method != http.MethodGet {
		now := sw.fingerprint()
		if res.Status >= 400 && now != sw.last {
			sw.fail(rq, res, "a refused request changed the database: %s -> %s", sw.last, now)
		}
		sw.last = now
	}
}

var timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// check applies the sweep's assertions to one answer.
func (sw *sweep) check(rq request, req *http.Request, res response) {
	if res.Status >= 500 {
		sw.server5xx[rq.class]++
		sw.fail(rq, res, "a 5xx")
		return
	}
	if mustReject[rq.class] && !rq.ignoredBody && res.Status < 400 {
		sw.fail(rq, res, "accepted text or a number a store cannot hold alike")
	}
	if rq.class == "valid" && res.Status >= 400 && res.Status != http.StatusNotFound {
		sw.fail(rq, res, "the valid request failed")
	}
	doc := (&url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath}).RequestURI()
	if err := openapitest.Check(req.Method, doc, res.Status, res.Header, res.Raw); err != nil {
		sw.fail(rq, res, "not as the OpenAPI document says: %v", err)
	}
	if id := res.Header.Get("X-Request-Id"); !regexp.MustCompile(`^[!-~]{1,64}$`).MatchString(id) {
		sw.fail(rq, res, "X-Request-Id echoed as %q", id)
	}
	if res.Status < 400 {
		return
	}
	var e map[string]any
	if err := json.Unmarshal(res.Raw, &e); err != nil {
		sw.fail(rq, res, "the error is not JSON")
		return
	}
	wantPath, _ := json.Marshal(req.URL.Path) // invalid UTF-8 comes back as U+FFFD
	var shownPath string
	_ = json.Unmarshal(wantPath, &shownPath)
	switch {
	case e["statusCode"] != float64(res.Status):
		sw.fail(rq, res, "statusCode %v", e["statusCode"])
	case e["error"] != http.StatusText(res.Status):
		sw.fail(rq, res, "error %v", e["error"])
	case e["message"] == "" || e["message"] == nil:
		sw.fail(rq, res, "no message")
	case !timestampRE.MatchString(fmt.Sprint(e["timestamp"])):
		sw.fail(rq, res, "timestamp %v", e["timestamp"])
	case e["path"] != shownPath:
		sw.fail(rq, res, "path %q", e["path"])
	case res.Status == http.StatusUnprocessableEntity && len(asMap(e["errors"])) == 0:
		sw.fail(rq, res, "a 422 without errors")
	case e["errorId"] != nil:
		sw.fail(rq, res, "an errorId on a 4xx")
	}
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func (sw *sweep) fail(rq request, res response, format string, args ...any) {
	sw.failures++
	if sw.failures > 60 {
		return
	}
	raw := res.Raw
	if len(raw) > 300 {
		raw = append(raw[:300:300], "…"...)
	}
	target := rq.target
	if len(target) > 200 {
		target = target[:200] + "…"
	}
	sw.t.Errorf("%s [%s] %s %s: %d %s: %s", rq.name, rq.class, rq.method, target, res.Status, fmt.Sprintf(format, args...), raw)
}

// fingerprint summarizes every table a request may write.
func (sw *sweep) fingerprint() string {
	var parts [16]int64
	ptrs := make([]any, len(parts))
	for i := range parts {
		ptrs[i] = &parts[i]
	}
	err := sw.h.DB.Writer().QueryRow(`SELECT
		(SELECT count(*) FROM subscribers), (SELECT CAST(coalesce(sum(version), 0) AS BIGINT) FROM subscribers),
		(SELECT coalesce(max(updated_at), 0) FROM subscribers),
		(SELECT count(*) FROM integrations), (SELECT coalesce(max(updated_at), 0) FROM integrations),
		(SELECT count(*) FROM workflows), (SELECT coalesce(max(updated_at), 0) FROM workflows),
		(SELECT count(*) FROM notifications), (SELECT count(*) FROM jobs), (SELECT coalesce(max(updated_at), 0) FROM jobs),
		(SELECT count(*) FROM messages), (SELECT coalesce(max(updated_at), 0) FROM messages),
		(SELECT count(*) FROM execution_details), (SELECT count(*) FROM transactions),
		(SELECT count(*) FROM translations), (SELECT coalesce(max(updated_at), 0) FROM translations)`).Scan(ptrs...)
	require.NoError(sw.t, err)
	return fmt.Sprint(parts)
}

// wire sends what no in-process request can carry — CR, LF and NUL in
// header values and request lines, raw bytes in paths — over a loopback
// connection. Go's server refuses most of these itself with a plain 400
// before Herald sees them; the rest reach Herald and get its error shape.
func (sw *sweep) wire() {
	srv := httptest.NewServer(sw.h.Handler)
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	for _, rt := range sweepRoutes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		path = regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "sw-x")
		for _, v := range []struct{ name, line, header string }{
			{"header-bare-cr", method + " " + path + " HTTP/1.1", "X-Request-Id: a\rb"},
			{"header-nul", method + " " + path + " HTTP/1.1", "X-Request-Id: a\x00b"},
			{"header-lf-injection", method + " " + path + " HTTP/1.1", "X-Request-Id: a\nSet-Cookie: x=1"},
			{"auth-nul", method + " " + path + " HTTP/1.1", "Authorization: ApiKey " + sw.h.DevKey + "\x00"},
			{"header-name-ff", method + " " + path + " HTTP/1.1", "X-\xff: 1"},
			{"path-nul-byte", method + " " + path + "\x00x HTTP/1.1", ""},
			{"path-raw-ff", method + " " + path + "/\xff HTTP/1.1", ""},
			{"path-bad-escape", method + " " + path + "%ZZ HTTP/1.1", ""},
			{"path-cr", method + " " + path + "\rx HTTP/1.1", ""},
			{"query-raw-ff-nul", method + " " + path + "?q=\xff%00 HTTP/1.1", ""},
		} {
			status, ct, raw := sw.rawRequest(addr, v.line, v.header)
			rq := request{class: classWire, name: rt.pattern + " wire " + v.name, method: method, target: path}
			sw.counts[classWire]++
			sw.statuses[rq.name] = status
			res := response{Status: status, Raw: raw}
			switch {
			case status == 0:
				sw.fail(rq, res, "no answer")
			case status >= 500:
				sw.server5xx[classWire]++
				sw.fail(rq, res, "a 5xx")
			case strings.HasPrefix(ct, "application/json") && status >= 400:
				var e map[string]any
				if json.Unmarshal(raw, &e) != nil || e["statusCode"] != float64(status) {
					sw.fail(rq, res, "Herald's answer is not in the error shape")
				}
			}
		}
	}
	res, err := http.Get(srv.URL + "/health")
	require.NoError(sw.t, err)
	res.Body.Close()
	require.Equal(sw.t, 200, res.StatusCode, "the server answers after the raw requests")
}

// rawRequest writes one request over a new loopback connection and reads
// the status, content type and body of the answer.
func (sw *sweep) rawRequest(addr, line, header string) (int, string, []byte) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(sw.t, err)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	b.WriteString(line + "\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n")
	if !strings.HasPrefix(header, "Authorization:") {
		b.WriteString("Authorization: ApiKey " + sw.h.DevKey + "\r\n")
	}
	if header != "" {
		b.WriteString(header + "\r\n")
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return 0, "", nil
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, "", nil
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type"), raw
}

// report logs what the sweep did: the requests sent per class, the 5xx answers
// per class (there must be none) and the failed checks.
func (sw *sweep) report(took time.Duration) {
	require.Equal(sw.t, 200, sw.h.call(sw.t, "", "GET", "/health", nil, nil).Status, "the server answers after the sweep")
	classes := make([]string, 0, len(sw.counts))
	total := 0
	for c, n := range sw.counts {
		classes = append(classes, fmt.Sprintf("%s=%d", c, n))
		total += n
	}
	sort.Strings(classes)
	errs, n5xx := []string{}, 0
	for c, n := range sw.server5xx {
		errs = append(errs, fmt.Sprintf("%s=%d", c, n))
		n5xx += n
	}
	sort.Strings(errs)
	sw.t.Logf("%s: %d requests in %s (%s); 5xx: %d %v; failed checks: %d",
		sw.h.DB.Dialect(), total, took.Round(time.Millisecond), strings.Join(classes, ", "), n5xx, errs, sw.failures)
}
