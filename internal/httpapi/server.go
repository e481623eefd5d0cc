// Package httpapi is Herald's HTTP layer: the routes of the API, request
// parsing and validation, authentication, idempotency, the one error writer,
// and the OpenAPI document of everything it serves.
package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/deliveryevents"
	"github.com/herald-notify/herald/internal/logctx"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/registry"
	"github.com/herald-notify/herald/internal/realtime"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/webhooks"
	"github.com/herald-notify/herald/internal/wire"
)

// Options configure a Server.
type Options struct {
	Store  store.Store
	Keys   *secret.Keys
	Logger *slog.Logger
	// RateLimit is the sustained requests per second allowed per environment;
	// zero disables rate limiting.
	RateLimit float64
	// AuthFailureLimit is the failed authentications allowed per minute per
	// client address, beyond which the address gets 429s until its budget
	// refills; zero disables the limit.
	AuthFailureLimit int
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
	// OnTrigger is called after a trigger commits jobs (wakes in-process workers).
	OnTrigger func()
	// Sandbox checks workflow templates and renders those of the trigger
	// path (default: sandbox.DefaultLimits).
	Sandbox *sandbox.Sandbox
	// Providers is the table of providers Herald delivers through; an
	// active integration's credentials are checked against it (default:
	// registry.Default()).
	Providers *provider.Registry
	// CORSOrigins are the origins whose pages may read the API's answers:
	// empty or "*" for every origin.
	CORSOrigins []string
	// InboxSessionTTL is how long an inbox session token is valid
	// (default DefaultInboxSessionTTL).
	InboxSessionTTL time.Duration
	// Realtime serves the inbox clients' sockets and event streams; nil
	// answers those routes with a 404 (a worker process).
	Realtime *realtime.Dispatcher
	// Metrics records every request and serves GET /metrics; nil answers
	// that route with a 404.
	Metrics *metrics.Metrics
	// MetricsToken, when set, is the Bearer token GET /metrics requires.
	MetricsToken string
	// Bridge calls the environments' Novu Framework apps (sync, status);
	// default: a client whose guard refuses private networks.
	Bridge *bridge.Client
	// Webhooks emits the environments' events to their webhook endpoints
	// (and says whether endpoints may be private addresses); default: one
	// that refuses private networks.
	Webhooks *webhooks.Service
	// SNS fetches Amazon SNS's signing certificates and confirms its
	// subscriptions (SES's delivery events); default: one whose guard
	// refuses private networks.
	SNS *deliveryevents.SNS
}

// DefaultInboxSessionTTL is how long an inbox session token is valid unless
// configured: the inbox clients never renew one, so it outlives a working
// day in an open tab; a reload opens a new session.
const DefaultInboxSessionTTL = 24 * time.Hour

// Server serves the API.
type Server struct {
	store            store.Store
	keys             *secret.Keys
	log              *slog.Logger
	now              func() time.Time
	mux              *http.ServeMux
	limiter          *rateLimiter
	authLimit        *authLimiter
	openapi          []byte
	onTrigger        func()
	providers        *provider.Registry
	channelProviders providerCache
	sandbox          *sandbox.Sandbox
	bridge           *bridge.Client
	cors             corsPolicy
	inboxTTL         time.Duration
	realtime         *realtime.Dispatcher
	keyCopies        sync.Map // ids of API keys whose copy this process kept
	patterns         []string // every route, as registered (tests check their coverage)
	metrics          *metrics.Metrics
	metricsToken     []byte
	webhooks         *webhooks.Service
	// deliveryEvents records the events providers post (inbound_webhooks.go).
	deliveryEvents *deliveryevents.Recorder
	// sns verifies SNS's posts and confirms its subscriptions (SES).
	sns *deliveryevents.SNS
}

// maxBody is the largest request body accepted.
const maxBody = 1 << 20

// New builds a Server.
func New(o Options) *Server {
	s := &Server{store: o.Store, keys: o.Keys, log: o.Logger, now: o.Now, mux: http.NewServeMux(), onTrigger: o.OnTrigger,
		sandbox: o.Sandbox, providers: o.Providers, cors: newCORSPolicy(o.CORSOrigins), inboxTTL: o.InboxSessionTTL,
		realtime: o.Realtime, metrics: o.Metrics}
	if o.MetricsToken != "" {
		s.metricsToken = []byte(o.MetricsToken)
	}
	if s.inboxTTL <= 0 {
		s.inboxTTL = DefaultInboxSessionTTL
	}
	if s.providers == nil {
		s.providers = registry.Default()
	}
	if s.bridge = o.Bridge; s.bridge == nil {
		s.bridge = bridge.New(bridge.Options{})
	}
	if s.sns = o.SNS; s.sns == nil {
		s.sns = deliveryevents.NewSNS(deliveryevents.SNSOptions{})
	}
	if s.sandbox == nil {
		s.sandbox = sandbox.New(sandbox.DefaultLimits)
	}
	if s.webhooks = o.Webhooks; s.webhooks == nil {
		s.webhooks = webhooks.New(webhooks.Options{Store: o.Store, Logger: o.Logger})
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.log = logctx.Logger(s.log) // request, environment and transaction ids on every line of a request
	if s.now == nil {
		s.now = time.Now
	}
	if o.RateLimit > 0 {
		s.limiter = newRateLimiter(o.RateLimit, s.now)
	}
	s.deliveryEvents = deliveryevents.NewRecorder(deliveryevents.RecorderOptions{Store: o.Store,
		Metrics: o.Metrics, Logger: s.log, Now: s.now})
	if o.Store != nil {
		s.metrics.DeliveryEventQueue(o.Store.DeliveryEventsQueued, s.log)
	}
	if o.AuthFailureLimit > 0 {
		s.authLimit = newAuthLimiter(o.AuthFailureLimit, s.now, s.log)
	}
	s.openapi = mustOpenAPIJSON(s.providers)
	s.routes()
	return s
}

// handlerFunc is a handler that returns its error for the error writer.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// access says who may call a route.
type access int

const (
	// public routes take no credentials.
	public access = iota
	// authenticated routes take an API key or a dashboard session token.
	authenticated
	// inboxSession routes (/v1/inbox/*) take the Bearer token of an inbox
	// session (POST /v1/inbox/session): one subscriber of one environment.
	inboxSession
)

func (s *Server) handle(pattern string, a access, h handlerFunc) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, s.wrapRoute(pattern, a, h))
}

// routes registers every route of the API in one place.
func (s *Server) routes() {
	s.handle("GET /health", public, s.health)
	s.handle("GET /openapi.json", public, s.openAPI)
	s.handle("GET /metrics", public, s.serveMetrics) // its own Bearer token (metrics.go)

	s.handle("POST /v2/subscribers", authenticated, s.subscriberCreate)
	s.handle("GET /v2/subscribers", authenticated, s.subscriberSearch)
	s.handle("GET /v2/subscribers/{subscriberId}", authenticated, s.subscriberGet)
	s.handle("PATCH /v2/subscribers/{subscriberId}", authenticated, s.subscriberPatch)
	s.handle("DELETE /v2/subscribers/{subscriberId}", authenticated, s.subscriberDelete)

	s.handle("PATCH /v1/subscribers/{subscriberId}/credentials", authenticated, s.credentialsAppend)
	s.handle("PUT /v1/subscribers/{subscriberId}/credentials", authenticated, s.credentialsReplace)
	s.handle("DELETE /v1/subscribers/{subscriberId}/credentials/{providerId}", authenticated, s.credentialsDelete)

	s.handle("POST /v1/integrations", authenticated, s.integrationCreate)
	s.handle("GET /v1/integrations", authenticated, s.integrationList)
	s.handle("GET /v1/integrations/active", authenticated, s.integrationListActive)
	s.handle("PUT /v1/integrations/{integrationId}", authenticated, s.integrationUpdate)
	s.handle("DELETE /v1/integrations/{integrationId}", authenticated, s.integrationDelete)
	s.handle("POST /v1/integrations/{integrationId}/set-primary", authenticated, s.integrationSetPrimary)

	s.handle("POST /v2/workflows", authenticated, s.workflowCreate)
	s.handle("GET /v2/workflows", authenticated, s.workflowList)
	s.handle("GET /v2/workflows/{workflowId}", authenticated, s.workflowGet)
	s.handle("PUT /v2/workflows/{workflowId}", authenticated, s.workflowUpdate)
	s.handle("DELETE /v2/workflows/{workflowId}", authenticated, s.workflowDelete)
	s.handle("POST /v2/layouts", authenticated, s.layoutCreate)
	s.handle("GET /v2/layouts", authenticated, s.layoutList)
	s.handle("GET /v2/layouts/{layoutId}", authenticated, s.layoutGet)
	s.handle("PUT /v2/layouts/{layoutId}", authenticated, s.layoutUpdate)
	s.handle("DELETE /v2/layouts/{layoutId}", authenticated, s.layoutDelete)
	s.handle("POST /v2/layouts/{layoutId}/duplicate", authenticated, s.layoutDuplicate)
	s.handle("POST /v2/layouts/{layoutId}/preview", authenticated, s.layoutPreview)
	s.handle("GET /v2/layouts/{layoutId}/usage", authenticated, s.layoutUsage)

	s.handle("POST /v1/events/trigger", authenticated, s.eventTrigger)
	s.handle("POST /v1/events/trigger/bulk", authenticated, s.eventTriggerBulk)
	s.handle("POST /v1/events/trigger/broadcast", authenticated, s.eventBroadcast)
	s.handle("DELETE /v1/events/trigger/{transactionId}", authenticated, s.eventCancel)

	s.handle("POST /v1/environment-variables", authenticated, s.envVarCreate)
	s.handle("GET /v1/environment-variables", authenticated, s.envVarList)
	s.handle("GET /v1/environment-variables/{key}", authenticated, s.envVarGet)
	s.handle("PATCH /v1/environment-variables/{key}", authenticated, s.envVarPatch)
	s.handle("DELETE /v1/environment-variables/{key}", authenticated, s.envVarDelete)
	s.handle("GET /v1/environment-variables/{key}/usage", authenticated, s.envVarUsage)
	s.handle("POST /v2/contexts", authenticated, s.contextCreate)
	s.handle("GET /v2/contexts", authenticated, s.contextList)
	s.handle("GET /v2/contexts/{type}/{id}", authenticated, s.contextGet)
	s.handle("PATCH /v2/contexts/{type}/{id}", authenticated, s.contextPatch)
	s.handle("DELETE /v2/contexts/{type}/{id}", authenticated, s.contextDelete)

	s.handle("GET /v1/subscribers/{subscriberId}/notifications/feed", authenticated, s.feed)
	s.handle("GET /v1/subscribers/{subscriberId}/notifications/unseen", authenticated, s.unseenCount)
	s.handle("POST /v1/subscribers/{subscriberId}/messages/mark-as", authenticated, s.markAs)
	s.handle("POST /v1/subscribers/{subscriberId}/messages/mark-all", authenticated, s.markAll)
	s.handle("POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}", authenticated, s.messageAction)
	s.handle("GET /v1/messages", authenticated, s.messageList)
	s.handle("DELETE /v1/messages/{messageId}", authenticated, s.messageDelete)

	s.handle("POST /v2/topics", authenticated, s.topicCreate)
	s.handle("GET /v2/topics", authenticated, s.topicList)
	s.handle("GET /v2/topics/{topicKey}", authenticated, s.topicGet)
	s.handle("PATCH /v2/topics/{topicKey}", authenticated, s.topicPatch)
	s.handle("DELETE /v2/topics/{topicKey}", authenticated, s.topicDelete)
	s.handle("POST /v2/topics/{topicKey}/subscriptions", authenticated, s.topicSubscribe)
	s.handle("GET /v2/topics/{topicKey}/subscriptions", authenticated, s.topicSubscriptionList)
	s.handle("DELETE /v2/topics/{topicKey}/subscriptions", authenticated, s.topicUnsubscribe)
	s.handle("GET /v1/topics/{topicKey}/subscribers/{subscriberId}", authenticated, s.topicMembership)
	s.handle("GET /v2/subscribers/{subscriberId}/subscriptions", authenticated, s.subscriberTopicList)

	s.handle("GET /v1/notifications", authenticated, s.notificationList)
	s.handle("GET /v1/notifications/{notificationId}", authenticated, s.notificationGet)

	s.handle("GET /v2/subscribers/{subscriberId}/preferences", authenticated, s.preferencesList)
	s.handle("PATCH /v2/subscribers/{subscriberId}/preferences", authenticated, s.preferencesPatch)
	s.handle("PATCH /v2/subscribers/{subscriberId}/preferences/bulk", authenticated, s.preferencesBulk)
	s.handle("POST /v1/subscribers/bulk", authenticated, s.subscriberBulkCreate)
	s.handle("PATCH /v1/subscribers/{subscriberId}/online-status", authenticated, s.subscriberOnlineStatus)
	s.handle("DELETE /v1/messages/transaction/{transactionId}", authenticated, s.messageDeleteByTransaction)
	s.handle("GET /v2/topics/{topicKey}/subscriptions/{identifier}", authenticated, s.topicSubscriptionGet)
	s.handle("PATCH /v2/topics/{topicKey}/subscriptions/{identifier}", authenticated, s.topicSubscriptionPatch)

	s.handle("POST /v1/inbox/session", public, s.inboxSessionCreate)
	s.handle("GET /v1/environments/me", authenticated, s.environmentMe)
	s.handle("GET /v1/environments", authenticated, s.environmentList)
	s.handle("GET /v2/subscribers/{subscriberId}/notifications", authenticated, s.inboxList)
	s.handle("GET /v2/subscribers/{subscriberId}/notifications/count", authenticated, s.inboxCount)
	s.handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/read", authenticated, s.inboxChange(store.InboxRead))
	s.handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unread", authenticated, s.inboxChange(store.InboxUnread))
	s.handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/archive", authenticated, s.inboxChange(store.InboxArchive))
	s.handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unarchive", authenticated,
		s.inboxChange(store.InboxUnarchive))
	s.handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/snooze", authenticated, s.inboxChange(store.InboxSnooze))
	s.handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unsnooze", authenticated,
		s.inboxChange(store.InboxUnsnooze))
	s.handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/actions/{actionType}/complete", authenticated,
		s.inboxAction(true))
	s.handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/actions/{actionType}/revert", authenticated,
		s.inboxAction(false))
	s.handle("DELETE /v2/subscribers/{subscriberId}/notifications/{notificationId}", authenticated, s.inboxDelete)
	s.handle("POST /v2/subscribers/{subscriberId}/notifications/seen", authenticated, s.inboxBulk(store.InboxSeen, bulkSeen, true))
	s.handle("POST /v2/subscribers/{subscriberId}/notifications/read", authenticated, s.inboxBulk(store.InboxRead, bulkRead, false))
	s.handle("POST /v2/subscribers/{subscriberId}/notifications/archive", authenticated,
		s.inboxBulk(store.InboxArchive, bulkArchive, false))
	s.handle("POST /v2/subscribers/{subscriberId}/notifications/read-archive", authenticated,
		s.inboxBulk(store.InboxArchive, bulkReadArchive, false))
	s.handle("POST /v2/subscribers/{subscriberId}/notifications/delete", authenticated,
		s.inboxBulk(store.InboxDelete, store.InboxFilter{}, false))

	// The inbox clients' routes: the session subscriber's notifications
	// and preferences (inbox_routes.go, inbox_preferences.go).
	s.handle("GET /v1/inbox/notifications", inboxSession, s.inboxClientList)
	s.handle("GET /v1/inbox/notifications/count", inboxSession, s.inboxCount)
	s.handle("PATCH /v1/inbox/notifications/{notificationId}/read", inboxSession, s.inboxChange(store.InboxRead))
	s.handle("PATCH /v1/inbox/notifications/{notificationId}/unread", inboxSession, s.inboxChange(store.InboxUnread))
	s.handle("PATCH /v1/inbox/notifications/{notificationId}/archive", inboxSession, s.inboxChange(store.InboxArchive))
	s.handle("PATCH /v1/inbox/notifications/{notificationId}/unarchive", inboxSession, s.inboxChange(store.InboxUnarchive))
	s.handle("PATCH /v1/inbox/notifications/{notificationId}/snooze", inboxSession, s.inboxChange(store.InboxSnooze))
	s.handle("PATCH /v1/inbox/notifications/{notificationId}/unsnooze", inboxSession, s.inboxChange(store.InboxUnsnooze))
	s.handle("PATCH /v1/inbox/notifications/{notificationId}/complete", inboxSession, s.inboxAction(true))
	s.handle("PATCH /v1/inbox/notifications/{notificationId}/revert", inboxSession, s.inboxAction(false))
	s.handle("DELETE /v1/inbox/notifications/{notificationId}/delete", inboxSession, s.inboxDelete)
	s.handle("POST /v1/inbox/notifications/seen", inboxSession, s.inboxBulk(store.InboxSeen, bulkSeen, true))
	s.handle("POST /v1/inbox/notifications/read", inboxSession, s.inboxBulk(store.InboxRead, bulkRead, false))
	s.handle("POST /v1/inbox/notifications/archive", inboxSession, s.inboxBulk(store.InboxArchive, bulkArchive, false))
	s.handle("POST /v1/inbox/notifications/read-archive", inboxSession, s.inboxBulk(store.InboxArchive, bulkReadArchive, false))
	s.handle("POST /v1/inbox/notifications/delete", inboxSession, s.inboxBulk(store.InboxDelete, store.InboxFilter{}, false))
	s.handle("GET /v1/inbox/preferences", inboxSession, s.inboxPreferencesList)
	s.handle("GET /v1/inbox/preferences/global", inboxSession, s.inboxPreferencesGlobal)
	s.handle("PATCH /v1/inbox/preferences", inboxSession, s.inboxPreferencesPatch)
	s.handle("PATCH /v1/inbox/preferences/bulk", inboxSession, s.inboxPreferencesBulk)
	s.handle("PATCH /v1/inbox/preferences/{workflowId}", inboxSession, s.inboxPreferencesWorkflowPatch)
	// Translations (translations.go, translations_upload.go).
	s.handle("POST /v2/translations", authenticated, s.translationCreate)
	s.handle("GET /v2/translations/{resourceType}/{resourceId}/{locale}", authenticated, s.translationGet)
	s.handle("DELETE /v2/translations/{resourceType}/{resourceId}/{locale}", authenticated, s.translationDelete(true))
	s.handle("DELETE /v2/translations/{resourceType}/{resourceId}", authenticated, s.translationDelete(false))
	s.handle("GET /v2/translations/group/{resourceType}/{resourceId}", authenticated, s.translationGroup)
	s.handle("POST /v2/translations/upload", authenticated, s.translationUpload)
	s.handle("GET /v2/translations/master-json", authenticated, s.translationMasterGet)
	s.handle("POST /v2/translations/master-json", authenticated, s.translationMasterImport)
	s.handle("POST /v2/translations/master-json/upload", authenticated, s.translationMasterUpload)
	// Environments and promotion between them; the rest of the workflow
	// operations (environments_manage.go, promote.go, workflows_steps.go).
	s.handle("POST /v1/environments", authenticated, s.environmentCreate)
	s.handle("PUT /v1/environments/{environmentId}", authenticated, s.environmentUpdate)
	s.handle("DELETE /v1/environments/{environmentId}", authenticated, s.environmentDelete)
	s.handle("GET /v2/environments/{environmentId}/tags", authenticated, s.environmentTags)
	s.handle("POST /v2/environments/{targetEnvironmentId}/diff", authenticated, s.environmentDiff)
	s.handle("POST /v2/environments/{targetEnvironmentId}/publish", authenticated, s.environmentPublish)
	s.handle("PATCH /v2/workflows/{workflowId}", authenticated, s.workflowPatch)
	s.handle("GET /v2/workflows/{workflowId}/steps/{stepId}", authenticated, s.workflowStepGet)
	s.handle("POST /v2/workflows/{workflowId}/step/{stepId}/preview", authenticated, s.workflowStepPreview)
	s.handle("PUT /v2/workflows/{workflowId}/sync", authenticated, s.workflowSync)
	s.handle("POST /v1/bridge/sync", authenticated, s.bridgeSync)
	s.handle("GET /v1/bridge/status", authenticated, s.bridgeStatus)
	s.handle("PUT /v1/bridge/controls/{workflowId}/{stepId}", authenticated, s.bridgeControls)

	// Outbound webhooks (webhooks.go).
	s.handle("POST /v2/webhooks/endpoints", authenticated, s.webhookEndpointCreate)
	s.handle("GET /v2/webhooks/endpoints", authenticated, s.webhookEndpointList)
	s.handle("GET /v2/webhooks/endpoints/{id}", authenticated, s.webhookEndpointGet)
	s.handle("PATCH /v2/webhooks/endpoints/{id}", authenticated, s.webhookEndpointPatch)
	s.handle("DELETE /v2/webhooks/endpoints/{id}", authenticated, s.webhookEndpointDelete)
	s.handle("POST /v2/webhooks/endpoints/{id}/rotate-secret", authenticated, s.webhookSecretRotate)
	s.handle("GET /v2/webhooks/endpoints/{id}/deliveries", authenticated, s.webhookDeliveries)

	// Providers' delivery events (inbound_webhooks.go): the provider's signature authenticates.
	s.handle("POST /v2/inbound-webhooks/delivery-providers/{environmentId}/{integrationId}", public, s.inboundDeliveryEvents)

	s.handle("GET /socket.io/", public, s.socketIO)
	s.handle("GET /socket.io", public, s.socketIO)
	s.handle("GET /v1/inbox/events", public, s.inboxEvents)
}

// ServeHTTP implements http.Handler. Every answer carries the CORS headers
// and every OPTIONS request is a preflight (cors.go); unknown paths and
// methods get the error shape too.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.cors.apply(w.Header(), r)
	if r.Method == http.MethodOptions {
		began := time.Now()
		s.cors.preflight(w)
		s.metrics.ObserveRequest(preflightRoute, r.Method, http.StatusNoContent, time.Since(began))
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.wrap(public, func(w http.ResponseWriter, r *http.Request) error {
			for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
				probe := r.Clone(r.Context())
				probe.Method = m
				if _, p := s.mux.Handler(probe); p != "" {
					return errorf(http.StatusMethodNotAllowed, "Cannot "+r.Method+" "+r.URL.Path)
				}
			}
			return errorf(http.StatusNotFound, "Cannot "+r.Method+" "+r.URL.Path)
		}).ServeHTTP(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONWith(w, status, v, s.log)
}

// writeJSONWith writes v as a JSON answer, logging a value that does not
// encode to log (and answering a 500).
func writeJSONWith(w http.ResponseWriter, status int, v any, log *slog.Logger) {
	body, err := json.Marshal(v)
	if err != nil {
		log.Error("encoding a response", "err", err)
		status, body = http.StatusInternalServerError, []byte(`{"statusCode":500,"message":"Internal server error","error":"Internal Server Error"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.log.Warn("health check: the database is unreachable", "err", err)
		return errorf(http.StatusServiceUnavailable, "The database is unreachable")
	}
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, err := w.Write(s.openapi)
	return err
}

// formatTime renders the API's timestamps: RFC 3339, UTC, milliseconds.
// formatTime and formatTimePtr write times as every answer does (wire.Time).
func formatTime(t time.Time) string { return wire.Time(t) }

func formatTimePtr(t *time.Time) *string { return wire.TimePtr(t) }
