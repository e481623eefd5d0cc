package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// This file holds what the bad-input sweep (badinput_http_test.go) sends:
// every route with a valid value for each of its positions, and the bad
// values of each class that the sweep puts in one position at a time.

// sweepRoute is one route of the sweep. Values may name fixture variables
// as {{var}}; "#N#" in a body becomes a number unique to the request.
type sweepRoute struct {
	pattern string            // exactly as registered: "GET /v2/subscribers/{subscriberId}"
	params  map[string]string // a valid value of each wildcard
	query   map[string]string // every known query parameter, with a valid value
	paging  []string          // integer query parameters
	enums   []string          // enumerated query parameters
	lists   []string          // list-valued query parameters
	body    string            // a valid body; "" for none
	// form is a valid multipart/form-data body (boundary "sweep", sweepForm)
	// instead of body: the valid, path, query and header variants send it;
	// the JSON body variants meet its refusal of what is not multipart.
	form string
	// bodyEnums are the dotted body paths holding enumerations.
	bodyEnums []string
}

// sweepRoutes are every route of the API; destructive ones come last so
// that the others find their fixtures.
var sweepRoutes = []sweepRoute{
	{pattern: "GET /health", query: map[string]string{}},
	{pattern: "GET /openapi.json", query: map[string]string{}},
	{pattern: "GET /metrics", query: map[string]string{}},

	{pattern: "POST /v2/subscribers", query: map[string]string{"failIfExists": "false"}, enums: []string{"failIfExists"},
		body: `{"subscriberId":"sw-new-#N#","firstName":"Ada","lastName":"L","email":"ada@example.com","phone":"+15550100",` +
			`"avatar":"https://x.test/a.png","locale":"en-US","timezone":"Europe/Paris","data":{"plan":"pro","tags":["a","b"],"nested":{"k":1}}}`},
	{pattern: "GET /v2/subscribers",
		query: map[string]string{"limit": "10", "orderBy": "_id", "orderDirection": "DESC", "includeCursor": "false",
			"subscriberId": "sw-sub", "email": "sw@", "phone": "1", "name": "Sw", "after": "{{cursor}}"},
		paging: []string{"limit"}, enums: []string{"orderBy", "orderDirection", "includeCursor"}},
	{pattern: "GET /v2/subscribers/{subscriberId}", params: map[string]string{"subscriberId": "sw-sub"}},
	{pattern: "PATCH /v2/subscribers/{subscriberId}", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"firstName":"Ada","lastName":null,"email":"sw@example.com","timezone":"UTC","data":{"k":"v","list":[1,"2"]}}`},

	{pattern: "PATCH /v1/subscribers/{subscriberId}/credentials", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"providerId":"fcm","integrationIdentifier":"sw-fcm","credentials":{"deviceTokens":["tok-#N#"],"webhookUrl":"https://x.test/h","title":"t"}}`},
	{pattern: "PUT /v1/subscribers/{subscriberId}/credentials", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"providerId":"fcm","credentials":{"deviceTokens":["tok-a","tok-b"],"channel":"c","state":"s"}}`},

	{pattern: "POST /v1/integrations", bodyEnums: []string{"channel", "conditions.0.type", "conditions.0.value",
		"conditions.0.children.0.operator", "conditions.0.children.0.on"},
		body: `{"providerId":"sendgrid","channel":"email","name":"SG","identifier":"sw-sg-#N#","active":false,` +
			`"credentials":{"apiKey":"k","from":"a@b.test","secure":true,"tlsOptions":{"x":1}},"configurations":{"inboundWebhookEnabled":false},` +
			`"conditions":[{"isNegated":false,"type":"GROUP","value":"AND","children":[{"field":"f","value":"v","operator":"EQUAL","on":"payload"}]}]}`},
	{pattern: "GET /v1/integrations"},
	{pattern: "GET /v1/integrations/active"},
	{pattern: "PUT /v1/integrations/{integrationId}", params: map[string]string{"integrationId": "{{putIntegration}}"},
		body: `{"name":"SG2","identifier":"sw-put","active":false,"credentials":{"apiKey":"k2"},"configurations":{},"conditions":[]}`},
	{pattern: "POST /v1/integrations/{integrationId}/set-primary", params: map[string]string{"integrationId": "{{primaryIntegration}}"}},

	{pattern: "POST /v2/workflows", bodyEnums: []string{"severity", "steps.0.type", "steps.1.controlValues.type",
		"steps.2.controlValues.unit", "steps.3.controlValues.method"},
		body: `{"name":"Sweep #N#","workflowId":"sw-wf-#N#","description":"d","tags":["t"],"active":true,"critical":false,` +
			`"severity":"low","preferences":{"all":{"enabled":true}},"payloadSchema":{"type":"object"},` +
			`"steps":[{"name":"Inbox","type":"in_app","stepId":"inbox","controlValues":{"body":"Hello","subject":"Hi",` +
			`"skip":{"and":[{"==":[{"var":"payload.vip"},true]},{"in":[{"var":"subscriber.data.plan"},["pro","team"]]}]}}},` +
			`{"name":"Wait","type":"delay","controlValues":{"type":"timed","cron":"0 9 * * 1"}},` +
			`{"name":"Limit","type":"throttle","controlValues":{"type":"fixed","amount":1,"unit":"hours","threshold":3,"throttleKey":"{{payload.id}}"}},` +
			`{"name":"CRM","type":"http_request","controlValues":{"method":"POST","url":"https://crm.example.com/o/{{payload.id}}",` +
			`"headers":[{"key":"X-Plan","value":"{{subscriber.data.plan}}"}],"body":"{\"id\":\"{{payload.id}}\"}",` +
			`"responseBodySchema":{"type":"object"},"enforceSchemaValidation":true,"continueOnFailure":false,"timeout":2000}},` +
			`{"name":"Batch","type":"digest","controlValues":{"amount":10,"unit":"minutes","lookBackWindow":{"amount":5,"unit":"minutes"},` +
			`"skip":{"==":[{"var":"steps.inbox.read"},false]}}},` +
			`{"name":"Daily","type":"digest","controlValues":{"cron":"0 9 * * *","digestKey":"projectId"}}]}`},
	{pattern: "GET /v2/workflows", query: map[string]string{"limit": "10", "offset": "0", "query": "sw"}, paging: []string{"limit", "offset"}},
	{pattern: "GET /v2/workflows/{workflowId}", params: map[string]string{"workflowId": "sw-flow"}},
	{pattern: "PUT /v2/workflows/{workflowId}", params: map[string]string{"workflowId": "sw-put-flow"}, bodyEnums: []string{"steps.0.type"},
		body: `{"name":"Sweep put","workflowId":"sw-put-flow","tags":["x"],"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`},

	// Bridge (fixture: a fake bridge, synced once).
	{pattern: "POST /v1/bridge/sync", query: map[string]string{"source": "cli"}, body: `{"bridgeUrl":"{{bridgeUrl}}"}`},
	{pattern: "GET /v1/bridge/status"},
	{pattern: "PUT /v1/bridge/controls/{workflowId}/{stepId}", params: map[string]string{"workflowId": "welcome", "stepId": "inbox"},
		body: `{"variables":{"subject":"Hi #N#"}}`},

	// Layouts (fixtures: layoutSweepFixtures).
	{pattern: "POST /v2/layouts", bodyEnums: []string{"__source"},
		body: `{"layoutId":"sw-layout-#N#","name":"Sweep #N#","isTranslationEnabled":false,"__source":"dashboard"}`},
	{pattern: "GET /v2/layouts", query: map[string]string{"limit": "10", "offset": "0", "orderBy": "name", "orderDirection": "ASC", "query": "sw"},
		paging: []string{"limit", "offset"}, enums: []string{"orderBy", "orderDirection"}},
	{pattern: "GET /v2/layouts/{layoutId}", params: map[string]string{"layoutId": "sw-layout"}},
	{pattern: "PUT /v2/layouts/{layoutId}", params: map[string]string{"layoutId": "sw-put-layout"}, bodyEnums: []string{"controlValues.email.editorType"},
		body: `{"name":"Sweep put","isTranslationEnabled":true,"controlValues":{"email":{"body":"<html><body>{{subscriber.firstName}} {{content}}</body></html>","editorType":"html"}}}`},
	{pattern: "POST /v2/layouts/{layoutId}/duplicate", params: map[string]string{"layoutId": "sw-layout"},
		body: `{"name":"Sweep copy #N#","layoutId":"sw-copy-#N#","isTranslationEnabled":false}`},
	{pattern: "POST /v2/layouts/{layoutId}/preview", params: map[string]string{"layoutId": "sw-layout"},
		body: `{"controlValues":{"email":{"body":"<html><body>{{subscriber.firstName}} {{content}}</body></html>","editorType":"html"}},` +
			`"previewPayload":{"subscriber":{"firstName":"Sw","data":{"k":[1,2]}}}}`},
	{pattern: "GET /v2/layouts/{layoutId}/usage", params: map[string]string{"layoutId": "sw-layout"}},
	{pattern: "DELETE /v2/layouts/{layoutId}", params: map[string]string{"layoutId": "sw-victim-layout"}},

	{pattern: "POST /v1/events/trigger", bodyEnums: []string{"to.2.type"},
		body: `{"name":"sw-flow","to":[{"subscriberId":"sw-sub","email":"sw@example.com","data":{"k":"v"}},"sw-to-#N#",` +
			`{"type":"Topic","topicKey":"sw-topic","exclude":["sw-victim"]}],` +
			`"payload":{"x":"y","n":1,"list":[1,2]},"overrides":{"email":{"subject":"s"}},"transactionId":"sw-tx-#N#","actor":"sw-sub",` +
			`"context":{"tenant":"sw","project":{"id":"sw-p","data":{"k":"v"}}}}`},
	{pattern: "POST /v1/events/trigger/broadcast",
		body: `{"name":"sw-flow","payload":{"x":"y","n":1},"overrides":{"email":{"subject":"s"}},"transactionId":"sw-bc-#N#","actor":"sw-sub"}`},
	{pattern: "POST /v1/events/trigger/bulk",
		body: `{"events":[{"name":"sw-flow","to":"sw-sub","payload":{"x":"y"},"transactionId":"sw-bulk-#N#"},` +
			`{"name":"sw-flow","to":["sw-bulk-to-#N#"],"overrides":{},"transactionId":"sw-bulk2-#N#"}]}`},

	{pattern: "GET /v1/subscribers/{subscriberId}/notifications/feed", params: map[string]string{"subscriberId": "sw-sub"},
		query:  map[string]string{"page": "0", "limit": "10", "read": "false", "seen": "false", "payload": b64JSON(`{"x":"y"}`)},
		paging: []string{"page", "limit"}, enums: []string{"read", "seen"}},
	{pattern: "GET /v1/subscribers/{subscriberId}/notifications/unseen", params: map[string]string{"subscriberId": "sw-sub"}},
	{pattern: "POST /v1/subscribers/{subscriberId}/messages/mark-as", params: map[string]string{"subscriberId": "sw-sub"},
		bodyEnums: []string{"markAs"}, body: `{"messageId":["{{message}}"],"markAs":"read"}`},
	{pattern: "POST /v1/subscribers/{subscriberId}/messages/mark-all", params: map[string]string{"subscriberId": "sw-sub"},
		bodyEnums: []string{"markAs"}, body: `{"markAs":"seen"}`},
	{pattern: "POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}",
		params:    map[string]string{"subscriberId": "sw-sub", "messageId": "{{message}}", "type": "primary"},
		bodyEnums: []string{"status"}, body: `{"status":"done","payload":{"k":"v"}}`},

	{pattern: "GET /v1/notifications",
		query: map[string]string{"page": "0", "limit": "10", "channels": "in_app", "templates": "sw-flow", "emails": "sw@example.com",
			"subscriberIds": "sw-sub", "transactionId": "sw-tx-fixture", "after": "2000-01-01T00:00:00Z", "before": "2999-01-01T00:00:00Z"},
		paging: []string{"page", "limit"}, enums: []string{"channels"}, lists: []string{"channels", "templates", "emails", "subscriberIds"}},
	{pattern: "POST /v2/topics", query: map[string]string{"failIfExists": "false"}, enums: []string{"failIfExists"},
		body: `{"key":"sw-new-topic-#N#","name":"Sweep","data":{"a":1,"nested":{"k":"v"}}}`},
	{pattern: "GET /v2/topics", query: map[string]string{"key": "sw", "name": "Sw", "limit": "10", "after": "{{topicCursor}}",
		"orderDirection": "ASC"}, paging: []string{"limit"}, enums: []string{"orderDirection"}},
	{pattern: "GET /v2/topics/{topicKey}/subscriptions", params: map[string]string{"topicKey": "sw-topic"},
		query:  map[string]string{"subscriberId": "sw-sub", "limit": "10", "before": "{{topicCursor}}", "orderDirection": "DESC"},
		paging: []string{"limit"}, enums: []string{"orderDirection"}},
	{pattern: "GET /v2/subscribers/{subscriberId}/subscriptions", params: map[string]string{"subscriberId": "sw-sub"},
		query:  map[string]string{"key": "sw", "limit": "10", "after": "{{topicCursor}}", "orderDirection": "ASC"},
		paging: []string{"limit"}, enums: []string{"orderDirection"}},
	{pattern: "GET /v2/topics/{topicKey}", params: map[string]string{"topicKey": "sw-topic"}},
	{pattern: "PATCH /v2/topics/{topicKey}", params: map[string]string{"topicKey": "sw-topic"}, body: `{"name":"Renamed","data":{"b":2}}`},
	{pattern: "POST /v2/topics/{topicKey}/subscriptions", params: map[string]string{"topicKey": "sw-topic"},
		body: `{"subscriptions":["sw-sub",{"subscriberId":"sw-sub","identifier":"sw-#N#"}]}`},
	{pattern: "GET /v1/topics/{topicKey}/subscribers/{subscriberId}", params: map[string]string{"topicKey": "sw-topic", "subscriberId": "sw-sub"}},
	{pattern: "GET /v1/messages",
		query:  map[string]string{"channel": "in_app", "subscriberId": "sw-sub", "transactionId": "sw-tx-fixture", "page": "0", "limit": "10"},
		paging: []string{"page", "limit"}, enums: []string{"channel"}, lists: []string{"transactionId"}},
	{pattern: "GET /v1/notifications/{notificationId}", params: map[string]string{"notificationId": "{{notification}}"}},
	{pattern: "GET /v2/subscribers/{subscriberId}/preferences", params: map[string]string{"subscriberId": "sw-sub"},
		query: map[string]string{"criticality": "all"}, enums: []string{"criticality"}},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/preferences", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"channels":{"in_app":true,"email":false,"sms":true,"chat":true,"push":true},"workflowId":"sw-flow"}`},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/preferences/bulk", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"preferences":[{"workflowId":"sw-flow","channels":{"in_app":true,"push":false}},{"workflowId":"sw-put-flow","channels":{"email":false}}]}`},
	{pattern: "GET /v2/subscribers/{subscriberId}/notifications", params: map[string]string{"subscriberId": "sw-sub"},
		query: map[string]string{"limit": "10", "after": "{{inboxMessage}}", "offset": "0", "read": "false", "seen": "false",
			"archived": "false", "snoozed": "false", "severity": "high", "tags": "t", "createdGte": "0", "createdLte": "4102444800000",
			"data": `{"kind":"x"}`, "contextKeys": "tenant:1"},
		paging: []string{"limit", "offset", "createdGte", "createdLte"},
		enums:  []string{"read", "seen", "archived", "snoozed", "severity"}, lists: []string{"severity", "tags", "contextKeys"}},
	{pattern: "GET /v2/subscribers/{subscriberId}/notifications/count", params: map[string]string{"subscriberId": "sw-sub"},
		query: map[string]string{"filters": `[{"read":false,"archived":false},{"tags":["t"],"severity":"high"},{"data":"{\"k\":1}"}]`}},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/read",
		params: map[string]string{"subscriberId": "sw-sub", "notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unread",
		params: map[string]string{"subscriberId": "sw-sub", "notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/archive",
		params: map[string]string{"subscriberId": "sw-sub", "notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unarchive",
		params: map[string]string{"subscriberId": "sw-sub", "notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/snooze",
		params: map[string]string{"subscriberId": "sw-sub", "notificationId": "{{inboxMessage}}"}, body: `{"snoozeUntil":"{{snoozeUntil}}"}`},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unsnooze",
		params: map[string]string{"subscriberId": "sw-sub", "notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/actions/{actionType}/complete",
		params: map[string]string{"subscriberId": "sw-sub", "notificationId": "{{inboxMessage}}", "actionType": "primary"}},
	{pattern: "PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/actions/{actionType}/revert",
		params: map[string]string{"subscriberId": "sw-sub", "notificationId": "{{inboxMessage}}", "actionType": "secondary"}},
	{pattern: "POST /v2/subscribers/{subscriberId}/notifications/seen", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"notificationIds":["{{inboxMessage}}"],"tags":{"and":[{"or":["t","u"]}]},"data":"{\"k\":1}","contextKeys":["tenant:c"]}`},
	{pattern: "POST /v2/subscribers/{subscriberId}/notifications/read", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"tags":["t"],"data":"{\"k\":{\"n\":1}}","contextKeys":["tenant:c"]}`},
	{pattern: "POST /v2/subscribers/{subscriberId}/notifications/archive", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"tags":["t"]}`},
	{pattern: "POST /v2/subscribers/{subscriberId}/notifications/read-archive", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"data":"{\"k\":1}"}`},

	{pattern: "GET /v1/inbox/notifications",
		query: map[string]string{"limit": "10", "after": "{{inboxMessage}}", "offset": "0", "read": "false", "seen": "false",
			"archived": "false", "snoozed": "false", "severity[]": "high", "tags[]": "t", "createdGte": "0", "createdLte": "4102444800000",
			"data": `{"k":1}`},
		paging: []string{"limit", "offset", "createdGte", "createdLte"},
		enums:  []string{"read", "seen", "archived", "snoozed", "severity[]"}, lists: []string{"severity[]", "tags[]"}},
	{pattern: "GET /v1/inbox/notifications/count",
		query: map[string]string{"filters": `[{"read":false,"archived":false,"snoozed":false,"severity":"high"},{"tags":["t"]},{"data":"{\"k\":1}"}]`}},
	{pattern: "PATCH /v1/inbox/notifications/{notificationId}/read", params: map[string]string{"notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v1/inbox/notifications/{notificationId}/unread", params: map[string]string{"notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v1/inbox/notifications/{notificationId}/archive", params: map[string]string{"notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v1/inbox/notifications/{notificationId}/unarchive", params: map[string]string{"notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v1/inbox/notifications/{notificationId}/snooze", params: map[string]string{"notificationId": "{{inboxMessage}}"},
		body: `{"snoozeUntil":"{{snoozeUntil}}"}`},
	{pattern: "PATCH /v1/inbox/notifications/{notificationId}/unsnooze", params: map[string]string{"notificationId": "{{inboxMessage}}"}},
	{pattern: "PATCH /v1/inbox/notifications/{notificationId}/complete", params: map[string]string{"notificationId": "{{inboxMessage}}"},
		body: `{"actionType":"primary"}`, bodyEnums: []string{"actionType"}},
	{pattern: "PATCH /v1/inbox/notifications/{notificationId}/revert", params: map[string]string{"notificationId": "{{inboxMessage}}"},
		body: `{"actionType":"secondary"}`, bodyEnums: []string{"actionType"}},
	{pattern: "POST /v1/inbox/notifications/seen", body: `{"notificationIds":["{{inboxMessage}}"],"tags":["t"],"data":"{\"k\":1}"}`},
	{pattern: "POST /v1/inbox/notifications/read", body: `{"tags":["t"],"data":"{\"k\":1}"}`},
	{pattern: "POST /v1/inbox/notifications/archive", body: `{"tags":["t"]}`},
	{pattern: "POST /v1/inbox/notifications/read-archive", body: `{"data":"{\"k\":1}"}`},
	{pattern: "GET /v1/inbox/preferences", query: map[string]string{"criticality": "all", "tags[]": "t", "severity": "high"},
		enums: []string{"criticality", "severity"}, lists: []string{"tags[]", "severity"}},
	{pattern: "GET /v1/inbox/preferences/global"},
	{pattern: "PATCH /v1/inbox/preferences", body: `{"in_app":true,"email":false,"sms":true,"chat":true,"push":true,"schedule":null}`},
	{pattern: "PATCH /v1/inbox/preferences/bulk",
		body: `{"preferences":[{"workflowId":"sw-flow","in_app":true,"push":false},{"workflowId":"sw-put-flow","email":false}]}`},
	{pattern: "PATCH /v1/inbox/preferences/{workflowId}", params: map[string]string{"workflowId": "sw-flow"},
		body: `{"in_app":true,"email":false,"enabled":true}`},

	// Environment variables and contexts (envctx_http_test.go makes their fixtures).
	{pattern: "POST /v1/environment-variables", bodyEnums: []string{"type"},
		body: `{"key":"SW_#N#","type":"string","isSecret":true,"values":[{"_environmentId":"{{devEnv}}","value":"v"}]}`},
	{pattern: "GET /v1/environment-variables", query: map[string]string{"search": "sw"}},
	{pattern: "GET /v1/environment-variables/{key}", params: map[string]string{"key": "SW_VAR"}},
	{pattern: "PATCH /v1/environment-variables/{key}", params: map[string]string{"key": "SW_VAR"}, bodyEnums: []string{"type"},
		body: `{"type":"string","isSecret":false,"values":[{"_environmentId":"{{devEnv}}","value":"v2"}]}`},
	{pattern: "GET /v1/environment-variables/{key}/usage", params: map[string]string{"key": "SW_VAR"}},
	{pattern: "POST /v2/contexts", body: `{"type":"tenant","id":"sw-#N#","data":{"name":"Sw","n":[1,2],"o":{"k":"v"}}}`},
	{pattern: "GET /v2/contexts",
		query: map[string]string{"limit": "10", "after": "{{contextCursor}}", "orderBy": "createdAt", "orderDirection": "DESC",
			"includeCursor": "false", "type": "tenant", "id": "sw", "search": "sw"},
		paging: []string{"limit"}, enums: []string{"orderBy", "orderDirection", "includeCursor"}},
	{pattern: "GET /v2/contexts/{type}/{id}", params: map[string]string{"type": "tenant", "id": "sw"}},
	{pattern: "PATCH /v2/contexts/{type}/{id}", params: map[string]string{"type": "tenant", "id": "sw"},
		body: `{"data":{"name":"Sw2","n":[1]}}`},
	// Outbound webhooks (webhooks_http_test.go makes their fixtures).
	{pattern: "POST /v2/webhooks/endpoints", bodyEnums: []string{"eventTypes.0"},
		body: `{"url":"https://hooks.example.com/sw/#N#","eventTypes":["message.sent","workflow.created"],"description":"Sw"}`},
	{pattern: "GET /v2/webhooks/endpoints"},
	{pattern: "GET /v2/webhooks/endpoints/{id}", params: map[string]string{"id": "{{webhookEndpoint}}"}},
	{pattern: "PATCH /v2/webhooks/endpoints/{id}", params: map[string]string{"id": "{{webhookEndpoint}}"}, bodyEnums: []string{"eventTypes.0"},
		body: `{"url":"https://hooks.example.com/sw-patched","eventTypes":["message.read"],"description":"Sw2","disabled":false}`},
	{pattern: "POST /v2/webhooks/endpoints/{id}/rotate-secret", params: map[string]string{"id": "{{webhookEndpoint}}"}},
	{pattern: "GET /v2/webhooks/endpoints/{id}/deliveries", params: map[string]string{"id": "{{webhookEndpoint}}"}},
	// Providers' delivery events (inbound_webhooks_sweep_test.go makes the integration; its events match no message).
	{pattern: "POST /v2/inbound-webhooks/delivery-providers/{environmentId}/{integrationId}",
		params: map[string]string{"environmentId": "{{environmentId}}", "integrationId": "{{inboundIntegration}}"},
		body: `[{"event":"delivered","sg_event_id":"sw-#N#","sg_message_id":"sw.filter0001","timestamp":1924873766,` +
			`"heraldMessageId":"000000000000000000000000","reason":"250 OK","category":["a","b"]}]`},

	// Destructive routes last, on victims of their own.
	{pattern: "DELETE /v1/subscribers/{subscriberId}/credentials/{providerId}",
		params: map[string]string{"subscriberId": "sw-victim", "providerId": "fcm"}},
	{pattern: "DELETE /v2/topics/{topicKey}/subscriptions", params: map[string]string{"topicKey": "sw-topic-unsub"},
		body: `{"subscriptions":["sw-sub"]}`},
	{pattern: "DELETE /v2/topics/{topicKey}", params: map[string]string{"topicKey": "sw-topic-doomed"}},
	{pattern: "DELETE /v1/messages/{messageId}", params: map[string]string{"messageId": "{{victimMessage}}"}},
	{pattern: "DELETE /v1/events/trigger/{transactionId}", params: map[string]string{"transactionId": "sw-tx-cancel"}},
	{pattern: "DELETE /v1/integrations/{integrationId}", params: map[string]string{"integrationId": "{{victimIntegration}}"}},
	{pattern: "DELETE /v2/workflows/{workflowId}", params: map[string]string{"workflowId": "sw-victim-flow"}},
	{pattern: "DELETE /v1/inbox/notifications/{notificationId}/delete", params: map[string]string{"notificationId": "{{inboxClientVictim}}"}},
	{pattern: "DELETE /v2/subscribers/{subscriberId}/notifications/{notificationId}",
		params: map[string]string{"subscriberId": "sw-sub", "notificationId": "{{inboxVictim}}"}},
	{pattern: "POST /v2/subscribers/{subscriberId}/notifications/delete", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"tags":["t"],"data":"{\"k\":1}"}`},
	{pattern: "POST /v1/inbox/notifications/delete", body: `{"tags":["t"],"data":"{\"k\":1}"}`},
	{pattern: "DELETE /v2/subscribers/{subscriberId}", params: map[string]string{"subscriberId": "sw-victim"}},
	{pattern: "DELETE /v1/environment-variables/{key}", params: map[string]string{"key": "SW_DOOMED"}},
	{pattern: "DELETE /v2/webhooks/endpoints/{id}", params: map[string]string{"id": "{{doomedWebhookEndpoint}}"}},
	{pattern: "DELETE /v2/contexts/{type}/{id}", params: map[string]string{"type": "tenant", "id": "sw-doomed"}},

	{pattern: "POST /v1/subscribers/bulk",
		body: `{"subscribers":[{"subscriberId":"sw-bulk-#N#","firstName":"Ada","email":"ada@example.com","locale":"en-US",` +
			`"timezone":"Europe/Paris","data":{"plan":"pro","n":[1,2]}},{"subscriberId":"sw-sub","lastName":null,"phone":"+1555"}]}`},
	{pattern: "PATCH /v1/subscribers/{subscriberId}/online-status", params: map[string]string{"subscriberId": "sw-sub"},
		body: `{"isOnline":false}`},
	{pattern: "GET /v2/topics/{topicKey}/subscriptions/{identifier}",
		params: map[string]string{"topicKey": "sw-topic", "identifier": "tk_sw-topic:si_sw-sub"}},
	{pattern: "PATCH /v2/topics/{topicKey}/subscriptions/{identifier}",
		params: map[string]string{"topicKey": "sw-topic", "identifier": "tk_sw-topic:si_sw-sub"},
		body: `{"name":"Sw","preferences":["sw-flow",{"workflowId":"sw-flow","enabled":false,"condition":{"==":[{"var":"payload.x"},"y"]}},` +
			`{"filter":{"workflowIds":["sw-flow"],"tags":["t"]},"enabled":true}]}`},
	{pattern: "DELETE /v1/messages/transaction/{transactionId}", params: map[string]string{"transactionId": "sw-tx-doomed"},
		query: map[string]string{"channel": "in_app"}, enums: []string{"channel"}},

	{pattern: "POST /v1/inbox/session",
		body: `{"applicationIdentifier":"{{appIdentifier}}","subscriberHash":"{{subscriberHash}}","subscriber":{"subscriberId":"sw-sub",` +
			`"firstName":"Sw","lastName":"L","email":"sw@example.com","phone":"+15550100","avatar":"https://x.test/a.png","locale":"en-US",` +
			`"timezone":"Europe/Paris","data":{"k":"v","n":[1,2]}},"contextHash":null,"defaultSchedule":null,"context":null}`},
	{pattern: "GET /v1/environments/me"},
	{pattern: "GET /v1/environments"},

	{pattern: "GET /socket.io/", query: map[string]string{"token": "not-a-token", "EIO": "4", "transport": "websocket"}},
	{pattern: "GET /socket.io", query: map[string]string{"token": "not-a-token", "EIO": "4", "transport": "websocket"}},
	{pattern: "GET /v1/inbox/events", query: map[string]string{"token": "not-a-token"}},

	// Translations; the uploads are multipart (form), their deletes last.
	{pattern: "POST /v2/translations", bodyEnums: []string{"resourceType"},
		body: `{"resourceId":"sw-flow","resourceType":"workflow","locale":"en_US","content":{"hello":"Hello","nested":{"k":"v"}}}`},
	{pattern: "GET /v2/translations/{resourceType}/{resourceId}/{locale}",
		params: map[string]string{"resourceType": "workflow", "resourceId": "sw-flow", "locale": "en_US"}},
	{pattern: "GET /v2/translations/group/{resourceType}/{resourceId}", params: map[string]string{"resourceType": "workflow", "resourceId": "sw-flow"}},
	{pattern: "POST /v2/translations/upload", form: sweepForm(map[string]string{"resourceId": "sw-flow", "resourceType": "workflow"},
		"files[]", "de_DE.json", `{"hello":"Hallo #N#"}`)},
	{pattern: "GET /v2/translations/master-json", query: map[string]string{"locale": "en_US"}},
	{pattern: "POST /v2/translations/master-json",
		body: `{"locale":"fr_FR","masterJson":{"workflows":{"sw-flow":{"hello":"Bonjour #N#"},"sw-none":{}},"layouts":{"sw-none":{}}}}`},
	{pattern: "POST /v2/translations/master-json/upload", form: sweepForm(nil, "file", "it_IT.json", `{"workflows":{"sw-flow":{"hello":"Ciao"}}}`)},
	{pattern: "DELETE /v2/translations/{resourceType}/{resourceId}/{locale}",
		params: map[string]string{"resourceType": "workflow", "resourceId": "sw-flow", "locale": "de_DE"}},
	{pattern: "DELETE /v2/translations/{resourceType}/{resourceId}", params: map[string]string{"resourceType": "workflow", "resourceId": "sw-flow"}},
}

// sweepForm is a multipart/form-data body (boundary "sweep") of fields and one file.
func sweepForm(fields map[string]string, field, name, content string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		fmt.Fprintf(&b, "--sweep\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", k, fields[k])
	}
	fmt.Fprintf(&b, "--sweep\r\nContent-Disposition: form-data; name=%q; filename=%q\r\nContent-Type: application/json\r\n\r\n%s\r\n",
		field, name, content)
	b.WriteString("--sweep--\r\n")
	return b.String()
}

func b64JSON(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// Classes of bad input, as the sweep counts them.
const (
	classUTF8      = "invalid-utf8"
	classNUL       = "nul"
	classSurrogate = "lone-surrogate"
	classNumber    = "huge-number"
	classDeep      = "deep-json"
	classWide      = "wide-json"
	classLong      = "oversized-string"
	classArray     = "oversized-array"
	classType      = "wrong-type"
	classEnum      = "unknown-enum"
	classPaging    = "paging"
	classSQL       = "sql-like-metacharacters"
	classHeader    = "header"
	classBody      = "whole-body"
	classWire      = "raw-wire-crlf-nul"
)

// mustReject are the classes no position may accept: a store would keep
// them differently or not at all.
var mustReject = map[string]bool{classUTF8: true, classNUL: true, classSurrogate: true, classNumber: true, classDeep: true}

// variant is one bad value of a class.
type variant struct {
	class, name, v string
}

// textVariants are bad values for a path or query position, percent-encoded.
func textVariants() []variant {
	return []variant{
		{classUTF8, "ff-fe", "%FF%FE"}, {classUTF8, "bad-continuation", "ok%C3%28"},
		{classNUL, "nul", "%00"}, {classNUL, "inner-nul", "a%00b"},
		{classSurrogate, "cesu-d800", "%ED%A0%80"}, {classSurrogate, "cesu-dfff", "x%ED%BF%BF"},
		{classLong, "1025", strings.Repeat("a", 1025)}, {classLong, "16k+1", strings.Repeat("b", 16<<10+1)},
		{classLong, "900KiB", strings.Repeat("c", 900<<10)}, {classLong, "4-byte-x256", url.PathEscape(fourByteText(256))},
		{classSQL, "percent", "%25"}, {classSQL, "underscore", "_"}, {classSQL, "quote", "%27"}, {classSQL, "backslash", "%5C"},
		{classSQL, "comment", "--"}, {classSQL, "or-1", url.QueryEscape(`' OR '1'='1' --`)}, {classSQL, "mix", "%25_%5C%27--"},
	}
}

// pagingVariants are bad integers.
var pagingVariants = []variant{
	{classPaging, "-1", "-1"}, {classPaging, "min-int64-1", "-9223372036854775809"}, {classPaging, "max-int64+1", "9223372036854775808"},
	{classPaging, "max-int64", "9223372036854775807"}, {classPaging, "2^31", "2147483648"}, {classPaging, "1e11", "99999999999"},
	{classPaging, "exponent", "1e3"}, {classPaging, "huge-exponent", "1e131072"}, {classPaging, "hex", "0x10"},
	{classPaging, "space", "%201"}, {classPaging, "empty", ""}, {classPaging, "fraction", "1.5"},
}

var enumVariants = []variant{
	{classEnum, "nope", "NOPE"}, {classEnum, "upper", "TRUE"}, {classEnum, "lower", "desc"}, {classEnum, "trailing-space", "in_app%20"},
	{classEnum, "empty", ""},
}

// listVariants are oversized list parameters (the raw value of one key).
func listVariants(valid string) []variant {
	many := func(n int) string { return strings.TrimSuffix(strings.Repeat(valid+",", n), ",") }
	return []variant{
		{classArray, "101-comma", many(101)}, {classArray, "5000-comma", many(5000)},
		{classArray, "long-item", strings.Repeat("x", 1025)},
	}
}

// feedPayloadVariants are bad payload filters (base64 of JSON).
var feedPayloadVariants = []variant{
	{classNumber, "b64-1e131072", b64JSON(`{"a":1e131072}`)}, {classNumber, "b64-1e-400", b64JSON(`{"a":1e-400}`)},
	{classNUL, "b64-nul", b64JSON(`{"a":"\u0000"}`)}, {classNUL, "b64-nul-key", b64JSON(`{"a\u0000":1}`)},
	{classSurrogate, "b64-d800", b64JSON(`{"a":"\ud800"}`)}, {classSurrogate, "b64-key-dc00", b64JSON(`{"\udc00":1}`)},
	{classUTF8, "b64-ff", b64JSON("{\"a\":\"\xff\"}")},
	{classDeep, "b64-deep-100", b64JSON(strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100))},
	{classDeep, "b64-deep-10000", b64JSON(strings.Repeat(`[`, 10000) + strings.Repeat("]", 10000))},
	{classWide, "b64-wide-500", b64JSON(wideObject(500))},
	{classSQL, "b64-sql", b64JSON(`{"a'--":"%_\\","b%":{"c_":"'"}}`)}, {classType, "b64-array", b64JSON(`[1]`)},
	{classType, "b64-not-json", b64JSON(`{"a":`)}, {classType, "not-base64", "!!!"},
}

// bodyValueVariants replace one JSON value of a body: text and number
// classes everywhere; oversized and SQL-like strings where a string was;
// wide objects where an object was (the sweep stays within a minute).
func bodyValueVariants(valid any, depth int) []variant {
	out := []variant{
		{classUTF8, "ff-fe", "\"\xff\xfe\""}, {classUTF8, "bad-continuation", "\"ok\xc3\x28\""},
		{classNUL, "nul", `"\u0000"`}, {classNUL, "inner-nul", `"a\u0000b"`},
		{classSurrogate, "d800", `"\ud800"`}, {classSurrogate, "dfff-d800", `"\udfff\ud800"`}, {classSurrogate, "split-pair", `"x\ud83dy"`},
		{classSurrogate, "cesu-bytes", "\"\xed\xa0\x80\""},
		{classNumber, "1e131072", `1e131072`}, {classNumber, "-1e400", `-1e400`}, {classNumber, "1e-400", `1e-400`},
		{classNumber, "long-fraction", "0." + strings.Repeat("0", 120) + "1"},
		{classDeep, "10000-arrays", strings.Repeat("[", 10000) + strings.Repeat("]", 10000)},
		{classDeep, "65-objects", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65)},
		{classType, "int", `1`}, {classType, "float", `-0.5`}, {classType, "string", `"x"`}, {classType, "bool", `true`},
		{classType, "null", `null`}, {classType, "array", `[]`}, {classType, "object", `{}`},
	}
	switch valid.(type) {
	case string:
		out = append(out,
			variant{classLong, "1025", `"` + strings.Repeat("a", 1025) + `"`}, variant{classLong, "16k+1", `"` + strings.Repeat("b", 16<<10+1) + `"`},
			variant{classLong, "4-byte-x1024", `"` + fourByteText(1024) + `"`},
			variant{classLong, "4-byte-email", `"` + fourByteText(1000) + `@example.com"`},
			variant{classSQL, "percent", `"%"`}, variant{classSQL, "underscore", `"_"`}, variant{classSQL, "quote", `"'"`},
			variant{classSQL, "backslash", `"\\"`}, variant{classSQL, "comment", `"--"`}, variant{classSQL, "or-1", `"' OR '1'='1' --"`},
			variant{classSQL, "mix", `"%_\\'--"`})
		if depth == 1 {
			out = append(out, variant{classLong, "900KiB", `"` + strings.Repeat("c", 900<<10) + `"`})
		}
	case map[string]any:
		out = append(out, variant{classWide, "50000-keys", wideObject(50_000)})
	}
	return out
}

// bodyKeyVariants add a member with a bad key to one object of a body.
var bodyKeyVariants = []variant{
	{classUTF8, "key-ff", "\"\xff\""}, {classNUL, "key-nul", `"k\u0000"`}, {classSurrogate, "key-d800", `"\ud800"`},
}

// wholeBodyVariants replace the whole body.
var wholeBodyVariants = []variant{
	{classBody, "not-json", `{"a":`}, {classBody, "empty", ``}, {classBody, "array", `[]`}, {classBody, "string", `"x"`},
	{classBody, "null", `null`}, {classBody, "two-values", `{} {}`}, {classUTF8, "raw-ff", "\xff{}"},
	{classNUL, "top-level-nul", `"\u0000"`}, {classDeep, "10000-deep", strings.Repeat("[", 10000) + strings.Repeat("]", 10000)},
	{classWide, "50000-keys", wideObject(50_000)}, {classLong, "1MiB+1", `{"a":"` + strings.Repeat("x", 1<<20) + `"}`},
}

// fourByteText is n characters of four UTF-8 bytes each that do not
// compress (PostgreSQL compresses a repeated one below its index row limit).
func fourByteText(n int) string {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	var b strings.Builder
	for range n {
		b.WriteRune(rune(0x10000 + rng.IntN(0xFFFF)))
	}
	return b.String()
}

func wideObject(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	b.WriteByte('}')
	return b.String()
}

// headerVariants are bad values of the headers Herald reads and of one it
// does not; sent in process, so no transport refuses them first.
func headerVariants(apiKey string) []struct{ name, header, value string } {
	return []struct{ name, header, value string }{
		{"request-id-ff", "X-Request-Id", "\xff\xfe"}, {"request-id-nul", "X-Request-Id", "a\x00b"},
		{"request-id-crlf", "X-Request-Id", "a\r\nSet-Cookie: x=1"}, {"request-id-space", "X-Request-Id", "a b"},
		{"request-id-65", "X-Request-Id", strings.Repeat("r", 65)}, {"request-id-900KiB", "X-Request-Id", strings.Repeat("r", 900<<10)},
		{"auth-ff", "Authorization", "ApiKey \xff\xfe"}, {"auth-nul", "Authorization", "ApiKey " + apiKey + "\x00"},
		{"auth-crlf", "Authorization", "ApiKey " + apiKey + "\r\nX: y"}, {"bearer-junk", "Authorization", "Bearer \xff.\x00.%"},
		{"content-type-ff", "Content-Type", "text/plain; charset=\xff"}, {"unknown-nul", "X-Junk", "\x00\xff\r\n"},
		{"idempotency-key-ff", "Idempotency-Key", "\xff\xfe"}, {"idempotency-key-nul", "Idempotency-Key", "k\x00"},
		{"idempotency-key-surrogate", "Idempotency-Key", "k\xed\xa0\x80"}, {"idempotency-key-crlf", "Idempotency-Key", "k\r\nX: y"},
		{"idempotency-key-256", "Idempotency-Key", strings.Repeat("k", 256)}, {"idempotency-key-900KiB", "Idempotency-Key", strings.Repeat("k", 900<<10)},
		{"idempotency-key-like", "Idempotency-Key", "%_'\\--"},
	}
}

// position is one value of a valid body: its path (keys and indexes) and value.
type position struct {
	path  []any
	value any
}

// bodyPositions lists every value of a valid body, parents before children.
func bodyPositions(body []byte) []position {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		panic("sweep: invalid body " + string(body))
	}
	var out []position
	var walk func(path []any, v any)
	walk = func(path []any, v any) {
		if len(path) > 0 {
			out = append(out, position{slices.Clone(path), v})
		}
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(append(path, k), t[k])
			}
		case []any:
			for i, x := range t {
				walk(append(path, i), x)
			}
		}
	}
	walk(nil, v)
	return out
}

const sentinel = "@@sweep@@"

// replaceAt returns body with the value at path replaced by the raw JSON
// fragment (or, with asKey, a member of the raw key added to the object there).
func replaceAt(body []byte, path []any, fragment string, asKey bool) []byte {
	var root any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	_ = dec.Decode(&root)
	set := func(parent any, at any, v any) {
		switch p := parent.(type) {
		case map[string]any:
			p[at.(string)] = v
		case []any:
			p[at.(int)] = v
		}
	}
	get := func(parent any, at any) any {
		switch p := parent.(type) {
		case map[string]any:
			return p[at.(string)]
		case []any:
			return p[at.(int)]
		}
		return nil
	}
	if asKey {
		target := root
		for _, at := range path {
			target = get(target, at)
		}
		m, ok := target.(map[string]any)
		if !ok {
			return nil
		}
		m[sentinel] = 1
	} else {
		parent := root
		for _, at := range path[:len(path)-1] {
			parent = get(parent, at)
		}
		set(parent, path[len(path)-1], sentinel)
	}
	enc, err := json.Marshal(root)
	if err != nil {
		panic(err)
	}
	return bytes.Replace(enc, []byte(`"`+sentinel+`"`), []byte(fragment), 1)
}

// growArray returns body with the array at path grown to n copies of its
// first item, or nil when that is not an array or would pass 1 MiB.
func growArray(body []byte, path []any, n int) []byte {
	var root any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	_ = dec.Decode(&root)
	target := root
	for _, at := range path {
		switch p := target.(type) {
		case map[string]any:
			target = p[at.(string)]
		case []any:
			target = p[at.(int)]
		}
	}
	arr, ok := target.([]any)
	if !ok || len(arr) == 0 {
		return nil
	}
	item, _ := json.Marshal(arr[0])
	grown := "[" + strings.TrimSuffix(strings.Repeat(string(item)+",", n), ",") + "]"
	if len(grown) > 1<<20 {
		return nil
	}
	return replaceAt(body, path, grown, false)
}

func pathName(path []any) string {
	parts := make([]string, len(path))
	for i, p := range path {
		switch t := p.(type) {
		case string:
			parts[i] = t
		case int:
			parts[i] = strconv.Itoa(t)
		}
	}
	return strings.Join(parts, ".")
}
