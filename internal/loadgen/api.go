package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// api is a client of Herald's public HTTP API under one API key.
type api struct {
	base string
	key  string
	http *http.Client
}

func newAPI(base, key string, conns int) *api {
	t := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute}
	return &api{base: strings.TrimRight(base, "/"), key: key, http: &http.Client{Transport: t, Timeout: 30 * time.Second}}
}

// do sends one request and returns the status and the whole body, so the
// time measured around it includes reading the answer.
func (a *api) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "ApiKey "+a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, out, err
}

// call sends a JSON request, requires the status want and decodes the
// answer into out (when not nil): the set-up calls, where any other answer
// ends the run.
func (a *api) call(ctx context.Context, method, path string, in any, want int, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	status, raw, err := a.do(ctx, method, path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if status != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, status, want, clip(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: %w: %s", method, path, err, clip(raw))
		}
	}
	return nil
}

// clip shortens a body for an error message.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// triggerAnswer is the body of an accepted POST /v1/events/trigger.
type triggerAnswer struct {
	Acknowledged  bool   `json:"acknowledged"`
	Status        string `json:"status"`
	TransactionID string `json:"transactionId"`
}

// checkTrigger says what is wrong with a trigger's answer ("" when it is
// an accepted trigger): a 2xx status and acknowledged:true, status
// "processed" and a transactionId.
func checkTrigger(status int, raw []byte) (triggerAnswer, string) {
	var t triggerAnswer
	if status < 200 || status > 299 {
		return t, fmt.Sprintf("status %d", status)
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return t, "body is not a trigger answer"
	}
	switch {
	case !t.Acknowledged:
		return t, "acknowledged is not true"
	case t.Status != "processed":
		return t, fmt.Sprintf("status %q, not \"processed\"", t.Status)
	case t.TransactionID == "":
		return t, "no transactionId"
	}
	return t, ""
}

// feedPage is the body of GET /v1/subscribers/{id}/notifications/feed.
type feedPage struct {
	Data       []feedItem `json:"data"`
	TotalCount *int       `json:"totalCount"`
	HasMore    *bool      `json:"hasMore"`
	PageSize   *int       `json:"pageSize"`
}

// feedItem is what the load tool reads of a feed item.
type feedItem struct {
	ID            string `json:"_id"`
	TransactionID string `json:"transactionId"`
}

// checkFeed says what is wrong with a feed answer ("" when it is a page).
func checkFeed(status int, raw []byte) (feedPage, string) {
	var p feedPage
	if status != http.StatusOK {
		return p, fmt.Sprintf("status %d", status)
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Data == nil || p.TotalCount == nil || p.HasMore == nil || p.PageSize == nil {
		return p, "body is not a feed page"
	}
	if *p.PageSize != len(p.Data) {
		return p, "pageSize is not the number of items"
	}
	for _, d := range p.Data {
		if d.ID == "" || d.TransactionID == "" {
			return p, "a feed item without _id or transactionId"
		}
	}
	return p, ""
}

func feedPath(subscriberID string, limit int) string {
	return fmt.Sprintf("/v1/subscribers/%s/notifications/feed?limit=%d", url.PathEscape(subscriberID), limit)
}
