package openapitest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	json := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	require.NoError(t, Check("GET", "/health", 200, json, []byte(`{"status":"ok"}`)))
	require.Error(t, Check("GET", "/health", 200, json, []byte(`{"status":"ok","extra":1}`)), "closed schema")
	require.Error(t, Check("GET", "/health", 200, http.Header{"Content-Type": {"text/plain"}}, []byte(`{}`)))
	require.Error(t, Check("GET", "/health", 418, json, []byte(`{}`)), "undocumented status")
	require.NoError(t, Check("GET", "/nowhere", 404, json, nil), "the catch-all")
	require.Error(t, Check("GET", "/nowhere", 200, json, []byte(`{}`)))

	preflight := http.Header{"Access-Control-Allow-Methods": {"GET, POST"}}
	require.NoError(t, Check("OPTIONS", "/v1/inbox/session?x=1", 204, preflight, nil), "a preflight")
	require.Error(t, Check("OPTIONS", "/v1/inbox/session", 200, preflight, []byte(`{}`)))
	require.Error(t, Check("OPTIONS", "/v1/inbox/session", 204, http.Header{}, nil), "a preflight names the methods")
}

func TestCheckEvent(t *testing.T) {
	t.Parallel()
	received := `{"message":{"_id":"0123456789abcdef01234567","transactionId":"tx","content":"Hi","subject":null,` +
		`"channel":"in_app","read":false,"seen":false,"cta":{},"createdAt":"2031-03-14T15:09:26.535Z","archived":false,` +
		`"subscriber":{"_id":"0123456789abcdef01234567","subscriberId":"u-1"},"tags":[],"data":{},` +
		`"deliveredAt":["2031-03-14T15:09:26.535Z"],"lastReadDate":null,"snoozedUntil":null,"firstSeenDate":null,` +
		`"archivedAt":null,"avatar":null,"severity":"none"}}`
	for _, tc := range []struct {
		name, event, data string
		ok                bool
	}{
		{"unseen", "unseen_count_changed", `{"unseenCount":2}`, true},
		{"unseen, an extra field", "unseen_count_changed", `{"unseenCount":2,"x":1}`, false},
		{"unread", "unread_count_changed", `{"counts":{"total":1,"severity":{"high":1,"medium":0,"low":0,"none":0}}}`, true},
		{"unread without a severity", "unread_count_changed", `{"counts":{"total":1,"severity":{"high":1}}}`, false},
		{"received", "notification_received", received, true},
		{"received without cta", "notification_received", strings.Replace(received, `"cta":{},`, "", 1), false},
		{"received, the inbox shape", "notification_received", `{"message":{"id":"0123456789abcdef01234567"}}`, false},
		{"an unknown event", "something_else", `{}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckEvent(tc.event, []byte(tc.data))
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}
