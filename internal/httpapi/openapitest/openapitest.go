// Package openapitest checks HTTP responses and realtime events against the
// OpenAPI document Herald serves; the HTTP suite and the end-to-end client
// test share it.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/realtime"
)

var (
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	errDoc error
)

// Router loads and validates the served document once.
func Router() (routers.Router, error) {
	once.Do(func() {
		d, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPIJSON())
		if err == nil {
			err = d.Validate(context.Background())
		}
		if err != nil {
			errDoc = err
			return
		}
		doc = d
		router, errDoc = legacy.NewRouter(d)
	})
	return router, errDoc
}

// eventSchemas names the schema of each realtime event's payload.
var eventSchemas = map[string]string{
	realtime.EventNotificationReceived: "NotificationReceivedEvent",
	realtime.EventUnseenCountChanged:   "UnseenCountChangedEvent",
	realtime.EventUnreadCountChanged:   "UnreadCountChangedEvent",
}

// CheckEvent validates the payload of a realtime event — a socket.io
// frame's second element, an event stream's data line — against its
// schema, as Check validates an HTTP answer's body. An event the document
// has no schema for fails.
func CheckEvent(name string, data []byte) error {
	schema, ok := eventSchemas[name]
	if !ok {
		return fmt.Errorf("event %q has no schema in the OpenAPI document", name)
	}
	return CheckSchema(schema, data)
}

// CheckSchema validates a JSON value against the named schema of the
// document's components, with the options ValidateResponse uses.
func CheckSchema(name string, data []byte) error {
	if _, err := Router(); err != nil {
		return err
	}
	ref := doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("the OpenAPI document has no schema %q", name)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	opts := []openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.VisitAsResponse()}
	if doc.IsOpenAPI31OrLater() {
		opts = append(opts, openapi3.EnableJSONSchema2020())
	}
	if err := ref.Value.VisitJSON(v, opts...); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Check validates one response to method requestURI: the JSON content type
// (another only where the document names it for that status),
// a documented status, and a body matching its schema (closed schemas make
// unexpected fields fail). Paths the document does not have may only get
// the catch-all's 404 or 405. An OPTIONS request is a CORS preflight: a 204
// without a body.
func Check(method, requestURI string, status int, header http.Header, body []byte) error {
	r, err := Router()
	if err != nil {
		return err
	}
	if method == http.MethodOptions {
		// CORS preflights, answered on every path outside the document's operations.
		if status != http.StatusNoContent || len(body) != 0 || header.Get("Access-Control-Allow-Methods") == "" {
			return fmt.Errorf("a preflight answered %d with %d bytes", status, len(body))
		}
		return nil
	}
	ct := header.Get("Content-Type")
	probe := httptest.NewRequest(method, requestURI, nil)
	route, params, err := r.FindRoute(probe)
	if err != nil {
		if ct != jsonType {
			return fmt.Errorf("content type %q", ct)
		}
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return nil
		}
		return fmt.Errorf("%s %s is not in the OpenAPI document: %w", method, requestURI, err)
	}
	if ct != jsonType && !documentsType(route.Operation, status, ct) {
		return fmt.Errorf("content type %q", ct)
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route, Options: opts},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                opts,
	})
	if err != nil {
		return errors.New(strings.TrimSpace(err.Error()))
	}
	return nil
}

const jsonType = "application/json; charset=utf-8"

// documentsType reports whether op documents a response of status in the
// media type of ct, other than JSON (GET /metrics: text/plain).
func documentsType(op *openapi3.Operation, status int, ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt == "application/json" || op == nil || op.Responses == nil {
		return false
	}
	res := op.Responses.Status(status)
	if res == nil || res.Value == nil {
		return false
	}
	c := res.Value.Content.Get(mt)
	return c != nil && c.Schema != nil
}
