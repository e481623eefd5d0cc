// Package msteamsfake is Microsoft Teams' wire fake: a local server that speaks
// its protocol, for the shared provider suite, end-to-end tests and the
// delivery benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package msteamsfake

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local server answering both kinds of Teams incoming webhook:
// an Office 365 connector and a Power Automate Workflows trigger.
type Fake struct {
	providertest.Base
	providertest.Server
	addressed atomic.Int64
	runs      atomic.Int64
}

// The webhooks' identities and secrets; another token or signature is refused.
const (
	fakeGroup   = "3f2b6c1e-9a4d-4e8b-b1f7-0c5d2e8a9b10"
	fakeTenant  = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	fakeCreator = "e4d3c2b1-a0f9-4e8d-9c7b-6a5f4e3d2c1b"
	// HookToken is the connector webhook's secret path segment.
	HookToken = "9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c"
	// WorkflowID names the Power Automate workflow.
	WorkflowID = "8d6f4b2a0c1e3f5a7b9d0e2c4a6f8b1d"
	// WorkflowSignature is the workflow trigger's sig parameter.
	WorkflowSignature = "hErAlD_t3aMs-w0rkfl0ws_S1gnatur3-0123456789"
	// ConnectorPath is the path of the Office 365 connector webhook.
	ConnectorPath = "/webhookb2/" + fakeGroup + "@" + fakeTenant + "/IncomingWebhook/" + HookToken + "/" + fakeCreator
	// WorkflowPath is the path of the Power Automate workflow trigger.
	WorkflowPath = "/powerautomate/automations/direct/workflows/" + WorkflowID + "/triggers/manual/paths/invoke"
	// BadPayload is the connector's answer to a body it cannot read.
	BadPayload = "Bad payload received by generic incoming webhook."
)

var (
	connectorRe = regexp.MustCompile(`^/webhookb2/([^/@]+)@([^/]+)/IncomingWebhook/([^/]+)/([^/]+)(?:/[^/]+)?$`)
	workflowRe  = regexp.MustCompile(`^/powerautomate/automations/direct/workflows/([^/]+)/triggers/manual/paths/invoke$`)
)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the fake's origin.
func (f *Fake) URL() string { return f.Srv.URL }

// ConnectorURL is an Office 365 connector incoming webhook at the fake.
func (f *Fake) ConnectorURL() string { return f.Srv.URL + ConnectorPath }

// WorkflowURL is a Power Automate Workflows webhook trigger at the fake.
func (f *Fake) WorkflowURL() string {
	return f.Srv.URL + WorkflowPath + "?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=" + WorkflowSignature
}

// Credentials are empty: the webhook URL is the credential.
func (f *Fake) Credentials() provider.Credentials { return provider.Credentials{} }

// BadCredentials is nil: a wrong token is a wrong webhook URL.
func (f *Fake) BadCredentials() provider.Credentials { return nil }

// Address points the message at the fake, alternating between the
// Workflows URL (first) and the connector URL so both kinds are exercised.
func (f *Fake) Address(m *provider.Message) {
	if f.addressed.Add(1)%2 == 1 {
		m.WebhookURL = f.WorkflowURL()
	} else {
		m.WebhookURL = f.ConnectorURL()
	}
}

// Traits of Teams webhooks: Workflows send Retry-After on 429, JSON body, no origin.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true}
}

func guid() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func text(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Request-Id", guid())
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func flowError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Ms-Request-Id", guid())
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if m := connectorRe.FindStringSubmatch(r.URL.Path); m != nil {
		f.connector(w, r, m, failure)
		return
	}
	if m := workflowRe.FindStringSubmatch(r.URL.Path); m != nil {
		f.workflow(w, r, m[1], failure)
		return
	}
	text(w, http.StatusNotFound, "Not Found")
}

// connector answers as an Office 365 connector: 200 "1", 400 for a payload
// it cannot read, 410 for a removed configuration, and the failures it
// deems retryable as 200 with the Teams endpoint's status in the text.
func (f *Fake) connector(w http.ResponseWriter, r *http.Request, m []string, failure providertest.Failure) {
	if r.Method != http.MethodPost {
		text(w, http.StatusBadRequest, "Invalid webhook request - GET not supported")
		return
	}
	if m[1] != fakeGroup || m[2] != fakeTenant || m[3] != HookToken || m[4] != fakeCreator {
		text(w, http.StatusGone, "Connector configuration not found")
		return
	}
	switch failure {
	case providertest.Rejected:
		text(w, http.StatusBadRequest, BadPayload)
		return
	case providertest.Unavailable:
		text(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	case providertest.RateLimited:
		text(w, http.StatusOK, "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 429 "+
			"with ContextId tcid=0,server=msgapi-production-fake-1,cv=fake.0..")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if json.Unmarshal(raw, &body) != nil {
		text(w, http.StatusBadRequest, BadPayload)
		return
	}
	content, ok := cardText(body)
	if !ok {
		// A MessageCard or plain body: Teams needs text or a summary.
		content, _ = body["text"].(string)
		summary, _ := body["summary"].(string)
		if content == "" && summary == "" && body["sections"] == nil {
			text(w, http.StatusBadRequest, "Summary or Text is required.")
			return
		}
	}
	id := guid()
	f.Record(providertest.Delivery{Content: content, Header: r.Header.Clone(), Body: raw, MessageID: id})
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Request-Id", id)
	_, _ = io.WriteString(w, "1")
}

// workflow answers as a Power Automate HTTP trigger: signature checked
// (SAS sig in the query), 202 with the run id, errors {"error":{code,message}}.
// The fake validates the body against the schema of Teams' "Send webhook
// alerts to a channel" template (a message with Adaptive Card attachments),
// as the trigger does with schema validation on.
func (f *Fake) workflow(w http.ResponseWriter, r *http.Request, id string, failure providertest.Failure) {
	q := r.URL.Query()
	switch {
	case id != WorkflowID:
		flowError(w, http.StatusNotFound, "WorkflowNotFound", fmt.Sprintf("The workflow '%s' could not be found.", id))
		return
	case q.Get("sig") == "":
		flowError(w, http.StatusUnauthorized, "DirectApiAuthorizationRequired",
			"The request must be authenticated only by Shared Access scheme.")
		return
	case q.Get("sig") != WorkflowSignature || q.Get("sp") != "/triggers/manual/run" || q.Get("api-version") == "":
		flowError(w, http.StatusUnauthorized, "DirectApiInvalidAuthorizationSignature",
			"The provided authorization signature for the request is invalid.")
		return
	case r.Method != http.MethodPost:
		flowError(w, http.StatusMethodNotAllowed, "TriggerRequestMethodNotValid",
			"The HTTP method for this request is not valid: expected 'Post' and actual '"+r.Method+"'.")
		return
	}
	switch failure {
	case providertest.Rejected:
		flowError(w, http.StatusBadRequest, "TriggerInputSchemaMismatch",
			"The input body for trigger 'manual' of type 'Request' did not match its schema definition.")
		return
	case providertest.Unavailable:
		flowError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "The service is temporarily unavailable.")
		return
	case providertest.RateLimited:
		w.Header().Set("Retry-After", "7")
		flowError(w, http.StatusTooManyRequests, "WorkflowRequestsThrottled",
			"Number of requests for workflow '"+id+"' exceeded the limit of '100' over time window of '00:01:00'.")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" || json.Unmarshal(raw, &body) != nil {
		flowError(w, http.StatusBadRequest, "InvalidRequestContent",
			"The request content is not valid and could not be deserialized.")
		return
	}
	content, ok := cardText(body)
	if !ok {
		flowError(w, http.StatusBadRequest, "TriggerInputSchemaMismatch",
			"The input body for trigger 'manual' of type 'Request' did not match its schema definition. "+
				"Error details: 'Required properties are missing from object: attachments.'.")
		return
	}
	n := f.runs.Add(1)
	run := fmt.Sprintf("08584%020dCU%02d", n, 10+n%90)
	f.Record(providertest.Delivery{Content: content, Header: r.Header.Clone(), Body: raw, MessageID: run})
	w.Header().Set("X-Ms-Workflow-Run-Id", run)
	w.Header().Set("X-Ms-Workflow-Id", WorkflowID)
	w.Header().Set("X-Ms-Request-Id", guid())
	w.Header().Set("X-Ms-Correlation-Id", guid())
	w.WriteHeader(http.StatusAccepted)
}

// cardText checks a message with Adaptive Card attachments and returns the
// text of the first card's TextBlocks (false when the body is not one).
func cardText(body map[string]any) (string, bool) {
	if body["type"] != "message" {
		return "", false
	}
	atts, _ := body["attachments"].([]any)
	if len(atts) == 0 {
		return "", false
	}
	var first string
	for i, a := range atts {
		att, _ := a.(map[string]any)
		card, _ := att["content"].(map[string]any)
		if att["contentType"] != "application/vnd.microsoft.card.adaptive" || card["type"] != "AdaptiveCard" {
			return "", false
		}
		blocks, _ := card["body"].([]any)
		if i > 0 {
			continue
		}
		var texts []string
		for _, b := range blocks {
			if tb, _ := b.(map[string]any); tb["type"] == "TextBlock" {
				s, _ := tb["text"].(string)
				texts = append(texts, s)
			}
		}
		first = strings.Join(texts, "\n")
	}
	return first, true
}
