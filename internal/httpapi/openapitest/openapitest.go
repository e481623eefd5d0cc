// Package openapitest checks HTTP responses against the OpenAPI document
// Herald serves; the HTTP suite and the end-to-end client test share it.
package openapitest

import (
	"bytes"
	"context"
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
)

var (
	once   sync.Once
	router routers.Router
	errDoc error
)

// Router loads and validates the served document once.
func Router() (routers.Router, error) {
	once.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPIJSON())
		if err == nil {
			err = doc.Validate(context.Background())
		}
		if err != nil {
			errDoc = err
			return
		}
		router, errDoc = legacy.NewRouter(doc)
	})
	return router, errDoc
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
