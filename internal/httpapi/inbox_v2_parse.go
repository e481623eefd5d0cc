package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// Limits of the v2 inbox filters (docs/api-behaviour.md, "Inbox state (v2)").
const (
	maxInboxPage      = 100
	maxInboxOffset    = 1_000_000
	maxCountFilters   = 30
	maxTagGroups      = 10
	maxTagsPerGroup   = 20
	maxTagLength      = 64
	maxDataFilterText = 8192
	maxContextKeys    = 100
	maxNotificationID = 100
	// latestTime bounds createdGte/createdLte: the end of year 9999, in ms.
	latestTime = 253402300799999
)

var errDataFilter = errors.New("must be a JSON object")

// parseBool reads "true" or "false".
func parseBool(v string) (bool, bool) {
	switch v {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// parseInboxListQuery reads the list's query: paging, filters, and the
// filter to echo back.
func parseInboxListQuery(q url.Values) (store.InboxListParams, map[string]any, error) {
	p := store.InboxListParams{Limit: 10}
	echo := map[string]any{}
	errs := fieldErrors{}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxInboxPage {
			errs.add("limit", "must be an integer from 1 to "+strconv.Itoa(maxInboxPage), v)
		}
		p.Limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxInboxOffset {
			errs.add("offset", "must be an integer from 0 to "+strconv.Itoa(maxInboxOffset), v)
		}
		p.Offset = n
	}
	if v := q.Get("after"); v != "" {
		if !id.Valid(v) {
			errs.add("after", "must be the id of a notification", v)
		}
		p.After = v
	}
	for _, f := range []struct {
		name string
		dst  **bool
	}{{"read", &p.Read}, {"seen", &p.Seen}, {"archived", &p.Archived}, {"snoozed", &p.Snoozed}} {
		if v := q.Get(f.name); v != "" {
			b, ok := parseBool(v)
			if !ok {
				errs.add(f.name, "must be true or false", v)
				continue
			}
			*f.dst = &b
			echo[f.name] = b
		}
	}
	var severity []string
	for _, v := range q["severity"] {
		for _, s := range strings.Split(v, ",") {
			if !slices.Contains(store.Severities, s) {
				errs.add("severity", "must be one of "+fmt.Sprint(store.Severities), v)
			} else if !slices.Contains(severity, s) {
				severity = append(severity, s)
			}
		}
	}
	if len(severity) > 0 {
		p.Severity, echo["severity"] = severity, severity
	}
	if vs := q["tags"]; len(vs) > 0 {
		var raw json.RawMessage
		if first := strings.TrimSpace(vs[0]); len(vs) == 1 && (strings.HasPrefix(first, "{") || strings.HasPrefix(first, "[")) {
			raw = json.RawMessage(vs[0])
		} else {
			raw, _ = json.Marshal(vs)
		}
		groups, err := parseTags(raw)
		if err != nil {
			errs.add("tags", err.Error(), vs)
		}
		if len(groups) > 0 {
			p.Tags, echo["tags"] = groups, json.RawMessage(raw)
		}
	}
	for _, f := range []struct {
		name string
		dst  **time.Time
	}{{"createdGte", &p.CreatedGTE}, {"createdLte", &p.CreatedLTE}} {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || n > latestTime {
				errs.add(f.name, "must be a time in Unix milliseconds", v)
				continue
			}
			t := time.UnixMilli(n).UTC()
			*f.dst, echo[f.name] = &t, n
		}
	}
	if v := q.Get("data"); v != "" {
		conds, err := parseDataFilter(v)
		if err != nil {
			errs.add("data", err.Error(), v)
		}
		p.Data, echo["data"] = conds, v
	}
	if vs := q["contextKeys"]; len(vs) > maxContextKeys {
		errs.add("contextKeys", "must have at most "+strconv.Itoa(maxContextKeys)+" items", len(vs))
	} else if q.Has("contextKeys") {
		p.ContextKeys = readContextKeys("contextKeys", vs, errs)
	}
	return p, echo, errs.err()
}

// parseDataFilter reads a data filter: the text of a JSON object, each leaf
// an exact-equality condition on the message's data.
func parseDataFilter(v string) ([]store.PayloadCondition, error) {
	if len(v) > maxDataFilterText {
		return nil, fmt.Errorf("must be at most %d bytes", maxDataFilterText)
	}
	return jsonConditions([]byte(v), errDataFilter)
}

// parseTags reads a tags filter: an array of tags (any of them), or
// {"and": [{"or": [tags]}, …]} (every group has one of its tags).
func parseTags(raw json.RawMessage) ([][]string, error) {
	raw = bytes.TrimSpace(raw)
	var groups [][]string
	var flat []string
	if err := json.Unmarshal(raw, &flat); err == nil {
		if len(flat) > 0 {
			groups = [][]string{flat}
		}
	} else {
		var and struct {
			And []struct {
				Or []string `json:"or"`
			} `json:"and"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if dec.Decode(&and) != nil || len(raw) == 0 || raw[0] != '{' {
			return nil, errors.New(`must be an array of tags or {"and": [{"or": [tags]}, …]}`)
		}
		for _, g := range and.And {
			if len(g.Or) == 0 {
				return nil, errors.New("has an empty or group")
			}
			groups = append(groups, g.Or)
		}
	}
	if len(groups) > maxTagGroups {
		return nil, fmt.Errorf("must have at most %d groups", maxTagGroups)
	}
	for _, g := range groups {
		if len(g) > maxTagsPerGroup {
			return nil, fmt.Errorf("must have at most %d tags in a group", maxTagsPerGroup)
		}
		for _, tag := range g {
			if tag == "" || utf8.RuneCountInString(tag) > maxTagLength {
				return nil, fmt.Errorf("must hold tags of 1 to %d characters", maxTagLength)
			}
		}
	}
	return groups, nil
}

// parseCountFilters reads the count's filters: a JSON array of at most 30
// filter objects, each also returned as sent, to echo.
func parseCountFilters(q url.Values) ([]store.InboxFilter, []json.RawMessage, error) {
	if !q.Has("filters") {
		return nil, nil, invalid("filters", "is required", nil)
	}
	v := q.Get("filters")
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(v), &items); err != nil {
		return nil, nil, errorf(http.StatusBadRequest, "Invalid filters: a JSON array of filter objects is required")
	}
	errs := fieldErrors{}
	if len(items) > maxCountFilters {
		return nil, nil, invalid("filters", "must have at most "+strconv.Itoa(maxCountFilters)+" filters", len(items))
	}
	out := make([]store.InboxFilter, len(items))
	echo := make([]json.RawMessage, len(items))
	for i, raw := range items {
		name := "filters." + strconv.Itoa(i)
		o, err := parseObject(raw)
		if err != nil {
			errs.add(name, "must be an object", rawValue(raw))
			continue
		}
		o.prefix, o.errs = name+".", errs
		f := &out[i]
		f.Read, f.Seen, f.Archived, f.Snoozed = o.boolean("read"), o.boolean("seen"), o.boolean("archived"), o.boolean("snoozed")
		if sraw, ok := o.raw["severity"]; ok && !isNull(sraw) {
			var list []string
			var one string
			if json.Unmarshal(sraw, &one) == nil {
				list = []string{one}
			} else if json.Unmarshal(sraw, &list) != nil {
				o.fail("severity", "must be a severity or an array of them", sraw)
			}
			for _, s := range list {
				if !slices.Contains(store.Severities, s) {
					o.fail("severity", "must be one of "+fmt.Sprint(store.Severities), sraw)
					break
				}
			}
			f.Severity = list
		}
		readFilterContent(o, f)
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil {
			echo[i] = buf.Bytes()
		}
	}
	return out, echo, errs.err()
}

// readFilterContent reads the tags, data and contextKeys of a filter object
// (a count filter or a bulk body); data may be a JSON object or its text.
func readFilterContent(o *object, f *store.InboxFilter) {
	if raw, ok := o.raw["tags"]; ok && !isNull(raw) {
		groups, err := parseTags(raw)
		if err != nil {
			o.fail("tags", err.Error(), raw)
		}
		f.Tags = groups
	}
	if raw, ok := o.raw["data"]; ok && !isNull(raw) {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			text = string(raw)
		}
		if text != "" {
			conds, err := parseDataFilter(text)
			if err != nil {
				o.fail("data", err.Error(), raw)
			}
			f.Data = conds
		}
	}
	if list, set := o.strings("contextKeys", maxContextKeys, maxString); set {
		f.ContextKeys = readContextKeys(o.prefix+"contextKeys", list, o.errs)
	}
}

// readBulkBody reads a bulk change's body — {tags?, data?, contextKeys?},
// and with ids, {notificationIds?} (empty: every notification) — an empty
// body counting as {}.
func readBulkBody(r *http.Request, ids bool) (store.InboxFilter, []string, error) {
	var f store.InboxFilter
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	if len(bytes.TrimSpace(body)) == 0 {
		return f, nil, nil
	}
	o, err := parseObject(body)
	if err != nil {
		return f, nil, err
	}
	readFilterContent(o, &f)
	var list []string
	if ids {
		var set bool
		if list, set = o.strings("notificationIds", maxNotificationID, 24); set {
			for i, v := range list {
				if !id.Valid(v) {
					o.errs.add("notificationIds."+strconv.Itoa(i), "must be a 24-character hex identifier", v)
				}
			}
		}
	}
	return f, list, o.errs.err()
}
