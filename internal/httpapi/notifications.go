package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

type executionDetailJSON struct {
	ID         string  `json:"_id"`
	CreatedAt  string  `json:"createdAt"`
	Status     string  `json:"status"`
	Detail     string  `json:"detail"`
	IsRetry    bool    `json:"isRetry"`
	IsTest     bool    `json:"isTest"`
	ProviderID string  `json:"providerId,omitempty"`
	Raw        *string `json:"raw"`
	Source     string  `json:"source"`
	// WebhookStatus is a provider's delivery event's status (source Webhook).
	WebhookStatus string `json:"webhookStatus,omitempty"`
}

type jobStepJSON struct {
	ID         string          `json:"_id"`
	Active     bool            `json:"active"`
	Filters    []any           `json:"filters"`
	TemplateID string          `json:"_templateId"`
	Name       string          `json:"name,omitempty"`
	ParentID   *string         `json:"_parentId"`
	Template   map[string]any  `json:"template,omitempty"`
	Metadata   map[string]any  `json:"metadata,omitempty"`
	Raw        json.RawMessage `json:"-"`
}

type jobJSON struct {
	ID                      string                `json:"_id"`
	Type                    string                `json:"type"`
	Digest                  json.RawMessage       `json:"digest,omitempty"`
	ExecutionDetails        []executionDetailJSON `json:"executionDetails"`
	Step                    jobStepJSON           `json:"step"`
	Overrides               json.RawMessage       `json:"overrides,omitempty"`
	Payload                 json.RawMessage       `json:"payload,omitempty"`
	ProviderID              string                `json:"providerId"`
	IntegrationID           string                `json:"_integrationId,omitempty"`
	Status                  string                `json:"status"`
	UpdatedAt               string                `json:"updatedAt"`
	ScheduleExtensionsCount *int                  `json:"scheduleExtensionsCount,omitempty"`
}

type eventSubscriberJSON struct {
	ID           string  `json:"_id"`
	SubscriberID string  `json:"subscriberId"`
	FirstName    *string `json:"firstName,omitempty"`
	LastName     *string `json:"lastName,omitempty"`
	Email        *string `json:"email,omitempty"`
	Phone        *string `json:"phone,omitempty"`
}

type eventTemplateJSON struct {
	ID       string `json:"_id"`
	Name     string `json:"name"`
	Origin   string `json:"origin"`
	Triggers []any  `json:"triggers"`
}

type eventJSON struct {
	ID                     string              `json:"_id"`
	EnvironmentID          string              `json:"_environmentId"`
	OrganizationID         string              `json:"_organizationId"`
	SubscriberID           string              `json:"_subscriberId"`
	TransactionID          string              `json:"transactionId"`
	TemplateID             string              `json:"_templateId"`
	DigestedNotificationID string              `json:"_digestedNotificationId,omitempty"`
	CreatedAt              string              `json:"createdAt"`
	UpdatedAt              string              `json:"updatedAt"`
	Channels               []string            `json:"channels"`
	Subscriber             eventSubscriberJSON `json:"subscriber"`
	Template               eventTemplateJSON   `json:"template"`
	Jobs                   []jobJSON           `json:"jobs"`
	Payload                json.RawMessage     `json:"payload"`
	Tags                   []string            `json:"tags"`
	To                     json.RawMessage     `json:"to,omitempty"`
	Critical               bool                `json:"critical"`
	Severity               string              `json:"severity"`
}

func eventOut(d store.NotificationDetail) eventJSON {
	n, wf := d.Notification, d.Workflow
	steps := map[string]store.Step{}
	for _, s := range wf.Steps {
		steps[s.ID] = s
	}
	out := eventJSON{
		ID: n.ID, EnvironmentID: n.EnvironmentID, OrganizationID: n.OrganizationID, SubscriberID: n.SubscriberID,
		TransactionID: n.TransactionID, TemplateID: n.WorkflowID, DigestedNotificationID: n.DigestedNotificationID,
		CreatedAt: formatTime(n.CreatedAt), UpdatedAt: formatTime(n.UpdatedAt), Channels: n.Channels,
		Subscriber: eventSubscriberJSON{ID: d.Subscriber.ID, SubscriberID: d.Subscriber.SubscriberID,
			FirstName: d.Subscriber.FirstName, LastName: d.Subscriber.LastName, Email: d.Subscriber.Email, Phone: d.Subscriber.Phone},
		Template: eventTemplateJSON{ID: wf.ID, Name: wf.Name, Origin: "external",
			Triggers: []any{map[string]any{"type": "event", "identifier": wf.Key, "variables": []any{}}}},
		Jobs: make([]jobJSON, 0, len(d.Jobs)), Payload: json.RawMessage(orDefault(n.Payload, "{}")), Tags: n.Tags,
		To: json.RawMessage(n.To), Critical: wf.Critical, Severity: wf.Severity,
	}
	if out.Channels == nil {
		out.Channels = []string{}
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if out.Severity == "" {
		out.Severity = "none"
	}
	for _, j := range d.Jobs {
		step := steps[j.StepID]
		js := jobJSON{
			ID: j.ID, Type: j.Type, ExecutionDetails: []executionDetailJSON{}, ProviderID: j.ProviderID, Status: j.Status,
			IntegrationID: j.IntegrationID,
			UpdatedAt:     formatTime(j.UpdatedAt), Digest: json.RawMessage(j.Digest),
			Payload: json.RawMessage(orDefault(n.Payload, "{}")), Overrides: json.RawMessage(orDefault(n.Overrides, "{}")),
			Step: jobStepJSON{ID: j.StepID, Active: true, Filters: []any{}, TemplateID: n.WorkflowID, Name: step.Name},
		}
		if step.Type == "delay" || step.Type == "digest" {
			js.Step.Metadata = step.ControlValues
			sec := j.ScheduleExtensionsCount
			js.ScheduleExtensionsCount = &sec
		} else if step.ControlValues != nil {
			js.Step.Template = step.ControlValues
		}
		for _, ed := range d.Details[j.ID] {
			js.ExecutionDetails = append(js.ExecutionDetails, executionDetailJSON{
				ID: ed.ID, CreatedAt: formatTime(ed.CreatedAt), Status: ed.Status, Detail: ed.Detail, IsRetry: ed.IsRetry,
				IsTest: ed.IsTest, ProviderID: ed.ProviderID, Raw: ed.Raw, Source: ed.Source, WebhookStatus: ed.WebhookStatus,
			})
		}
		out.Jobs = append(out.Jobs, js)
	}
	return out
}

func (s *Server) notificationGet(w http.ResponseWriter, r *http.Request) error {
	nid := r.PathValue("notificationId")
	if !id.Valid(nid) {
		return invalid("notificationId", "must be a 24-character hex identifier", nid)
	}
	d, err := s.store.NotificationGet(r.Context(), callerFrom(r.Context()).Scope, nid)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Notification "+nid+" was not found")
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, eventOut(d))
	return nil
}

// maxListValues bounds every list-valued query parameter.
const maxListValues = 100

// listParam reads a list parameter given repeated, comma-separated, or with [].
func listParam(q map[string][]string, name string) []string {
	var out []string
	for _, key := range []string{name, name + "[]"} {
		for _, v := range q[key] {
			for _, part := range strings.Split(v, ",") {
				if part = strings.TrimSpace(part); part != "" {
					out = append(out, part)
				}
			}
		}
	}
	return out
}

func parseNotificationList(q map[string][]string, scope store.Scope) (store.NotificationListParams, error) {
	p := store.NotificationListParams{Scope: scope, Limit: 10}
	errs := fieldErrors{}
	first := func(name string) string {
		if v := q[name]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if v := first("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1_000_000 {
			errs.add("page", "must be an integer of at least 0", v)
		}
		p.Page = n
	}
	if v := first("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			errs.add("limit", "must be an integer from 1 to 100", v)
		}
		p.Limit = n
	}
	for _, l := range []struct {
		name   string
		dst    *[]string
		maxLen int
	}{
		{"channels", &p.Channels, maxString}, {"templates", &p.WorkflowIDs, maxString},
		{"emails", &p.Emails, maxString}, {"subscriberIds", &p.SubscriberIDs, maxSubscriberID},
	} {
		values := listParam(q, l.name)
		if len(values) > maxListValues {
			errs.add(l.name, fmt.Sprintf("must list at most %d values", maxListValues), len(values))
			continue
		}
		for _, v := range values {
			if utf8.RuneCountInString(v) > l.maxLen {
				errs.add(l.name, fmt.Sprintf("must list values of at most %d characters", l.maxLen), v)
				break
			}
		}
		*l.dst = values
	}
	for _, c := range p.Channels {
		if !contains(stepTypes, c) {
			errs.add("channels", "must list step types: "+strings.Join(stepTypes, ", "), c)
		}
	}
	p.TransactionID = first("transactionId")
	if utf8.RuneCountInString(p.TransactionID) > maxTransactionID {
		errs.add("transactionId", "must be at most 256 characters", p.TransactionID)
	}
	for _, f := range []struct {
		name string
		dst  **time.Time
	}{{"after", &p.After}, {"before", &p.Before}} {
		if v := first(f.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				errs.add(f.name, "must be an ISO 8601 time", v)
				continue
			}
			*f.dst = &t
		}
	}
	return p, errs.err()
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// eventSummaryJSON is a notification as the listing shows it: the event
// without its jobs. The listing returns event triggers; the execution
// record of each comes from retrieving the event (docs/api-behaviour.md,
// "Events"). Leaving the jobs out also keeps the in-app provider's `svc` out of
// the listing, which the established service's SDK would reject.
type eventSummaryJSON struct {
	eventJSON
	Jobs []jobJSON `json:"jobs,omitempty"` // shadows eventJSON.Jobs; always nil
}

func (s *Server) notificationList(w http.ResponseWriter, r *http.Request) error {
	p, err := parseNotificationList(r.URL.Query(), callerFrom(r.Context()).Scope)
	if err != nil {
		return err
	}
	ds, more, err := s.store.NotificationList(r.Context(), &p)
	if err != nil {
		return err
	}
	data := make([]eventSummaryJSON, 0, len(ds))
	for _, d := range ds {
		data = append(data, eventSummaryJSON{eventJSON: eventOut(d)})
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"data": data, "page": p.Page, "pageSize": p.Limit, "hasMore": more})
	return nil
}
