package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/codefirst"
	"github.com/herald-notify/herald/internal/store"
)

// The bridge routes of Novu Framework apps (docs/api-behaviour.md
// "Code-first workflows"): POST /v1/bridge/sync (what `npx novu sync`
// sends), GET /v1/bridge/status, PUT /v1/bridge/controls/{workflowId}/{stepId}.

// maxBridgeURL bounds a bridge URL, as the URLs of HTTP request steps.
const maxBridgeURL = 2048

// bridgeSync serves POST /v1/bridge/sync: the environment's synced
// workflows replaced with the ones its bridge lists now. Every failure is
// a 400 that says why (Novu wraps them all so), and changes nothing.
func (s *Server) bridgeSync(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	raw := o.requiredText("bridgeUrl", maxBridgeURL)
	if raw != "" {
		if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			o.fail("bridgeUrl", "must be an absolute http or https URL", o.raw["bridgeUrl"])
		}
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	c := callerFrom(r.Context())
	key, err := s.bridgeKey(r.Context(), c.EnvironmentID)
	if err != nil {
		return err
	}
	synced, err := codefirst.Sync(r.Context(), s.bridge, s.store, &codefirst.SyncParams{Scope: c.Scope, BridgeURL: raw,
		SecretKey: key, Now: s.now()})
	if err != nil {
		return bridgeError(err)
	}
	out := make([]workflowJSON, len(synced))
	for i, wf := range synced {
		out[i] = workflowOut(wf)
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"data": out})
	return nil
}

// bridgeStatus serves GET /v1/bridge/status: the health check of the
// environment's bridge.
func (s *Server) bridgeStatus(w http.ResponseWriter, r *http.Request) error {
	env, key, err := s.envBridge(r.Context())
	if err != nil {
		return err
	}
	health, err := s.bridge.HealthCheck(r.Context(), env.BridgeURL, key)
	if err != nil {
		return bridgeError(err)
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"data": health})
	return nil
}

// bridgeControls serves PUT /v1/bridge/controls/{workflowId}/{stepId}: a
// synced step's control values, kept raw (the bridge renders them).
func (s *Server) bridgeControls(w http.ResponseWriter, r *http.Request) error {
	wf, i, err := s.pathStep(r)
	if err != nil {
		return err
	}
	if wf.Origin != store.OriginBridge {
		return errorf(http.StatusBadRequest, "Workflow "+strconv.Quote(wf.Key)+" was not synced from a bridge:"+
			" its controls are set with PUT /v2/workflows/{workflowId}")
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	v, set := o.jsonObject("variables", maxDataBytes)
	if !set || v == nil {
		o.errs.add("variables", "is required: an object of the step's control values", nil)
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	step := &wf.Steps[i]
	step.ControlValues = nil
	if err := json.Unmarshal(v, &step.ControlValues); err != nil {
		return err
	}
	step.ControlOrder = nil
	wf.UpdatedAt = s.now()
	if err := s.store.WorkflowUpdate(r.Context(), &wf); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"data": workflowOut(wf).Steps[i]})
	return nil
}

// envBridge is the caller's environment, whose bridge it must have, and
// the key its bridge calls are signed with.
func (s *Server) envBridge(ctx context.Context) (store.Environment, string, error) {
	env, err := s.store.EnvironmentGetByID(ctx, callerFrom(ctx).EnvironmentID)
	if err != nil {
		return env, "", err
	}
	if env.BridgeURL == "" {
		return env, "", errorf(http.StatusBadRequest, "This environment has no bridge: sync one first (POST /v1/bridge/sync, `npx novu sync`)")
	}
	key, err := s.bridgeKey(ctx, env.ID)
	return env, key, err
}

// bridgeKey is the key the environment's bridge calls are signed with: its
// oldest API key (the app's NOVU_SECRET_KEY), as HTTP request steps sign.
func (s *Server) bridgeKey(ctx context.Context, environmentID string) (string, error) {
	keys, err := s.store.APIKeySigningKeys(ctx, environmentID)
	if err != nil {
		return "", err
	}
	if len(keys) == 0 {
		return "", errorf(http.StatusBadRequest, "No API key of this environment can sign bridge requests yet:"+
			" a key created before this Herald version signs once it has been used for an API call")
	}
	return keys[0], nil
}

// bridgeError is a failed bridge call or sync as the 400 Novu answers.
func bridgeError(err error) error {
	var be *bridge.Error
	if errors.As(err, &be) {
		msg := "The bridge could not be reached or answered wrongly: " + be.Message
		if be.Status != 0 {
			msg += " (HTTP " + strconv.Itoa(be.Status) + ", " + be.Code + ")"
		} else if be.Code != "" {
			msg += " (" + be.Code + ")"
		}
		return errorf(http.StatusBadRequest, msg)
	}
	if e, ok := store.IsMadeElsewhere(err); ok {
		return errorf(http.StatusBadRequest, "Workflow "+e.Key+" was already created in Dashboard. Please use another workflowId.")
	}
	return err
}
