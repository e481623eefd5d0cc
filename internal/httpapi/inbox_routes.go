package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The notification routes of the inbox clients (/v1/inbox/notifications…)
// are the admin routes /v2/subscribers/{subscriberId}/notifications… acting
// on the session's subscriber (inboxSubscriber) and answering in the
// clients' envelope (writeInbox); this file holds what the clients send
// differently.

// tagGroupKey is a tags key of the clients' AND form: tags[0][]=a.
var tagGroupKey = regexp.MustCompile(`^tags\[(\d{1,2})\]\[\]$`)

// clientListQuery rewrites the query @novu/js sends — tags[]=a (any of),
// tags[0][]=a&tags[1][]=b (an AND of OR-groups), severity[]=high — into the
// keys parseInboxListQuery reads.
func clientListQuery(q url.Values) (url.Values, error) {
	out := url.Values{}
	groups := map[int][]string{}
	var or []string
	for k, vs := range q {
		switch m := tagGroupKey.FindStringSubmatch(k); {
		case k == "tags[]":
			or = append(or, vs...)
		case m != nil:
			n, _ := strconv.Atoi(m[1])
			if n >= maxTagGroups {
				return nil, invalid("tags", "must have at most "+strconv.Itoa(maxTagGroups)+" groups", k)
			}
			groups[n] = append(groups[n], vs...)
		case k == "severity[]":
			out["severity"] = append(out["severity"], vs...)
		default:
			out[k] = append(out[k], vs...)
		}
	}
	switch {
	case len(or) > 0 && len(groups) > 0:
		return nil, invalid("tags", "must be either tags[] or tags[N][], not both", nil)
	case len(or) > 0:
		out["tags"] = append(out["tags"], or...)
	case len(groups) > 0:
		type orGroup struct {
			Or []string `json:"or"`
		}
		keys := make([]int, 0, len(groups))
		for n := range groups {
			keys = append(keys, n)
		}
		sort.Ints(keys)
		and := make([]orGroup, 0, len(keys))
		for _, n := range keys {
			and = append(and, orGroup{Or: groups[n]})
		}
		raw, _ := json.Marshal(map[string]any{"and": and})
		out["tags"] = append(out["tags"], string(raw))
	}
	return out, nil
}

// inboxClientList serves GET /v1/inbox/notifications: the session
// subscriber's notifications, newest first. Without `snoozed`, snoozed
// notifications are left out: they come back when the snooze ends.
func (s *Server) inboxClientList(w http.ResponseWriter, r *http.Request) error {
	q, err := clientListQuery(r.URL.Query())
	if err != nil {
		return err
	}
	if data := q.Get("data"); strings.TrimSpace(data) == "{}" {
		q.Del("data") // <Inbox/> sends data={} with no tabs: no filter
	}
	if !q.Has("snoozed") {
		q.Set("snoozed", "false")
	}
	r.URL.RawQuery = q.Encode()
	return s.inboxList(w, r)
}
