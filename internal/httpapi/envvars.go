package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// Environment variables (/v1/environment-variables): organization-wide
// keys with a value per environment, {{env.KEY}} in templates.

var envVarKeyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

const (
	envVarKeyRule  = "must start with a letter and hold only letters, digits and _ (at most 256 characters)"
	maxEnvVarKey   = 256
	maxEnvVarValue = 256
	maxEnvVarItems = 100
	// envVarMask is what every read shows in place of a secret value.
	envVarMask = "••••••••"
)

func validEnvVarKey(k string) bool { return len(k) <= maxEnvVarKey && envVarKeyRE.MatchString(k) }

type envVarValueJSON struct {
	EnvironmentID string `json:"_environmentId"`
	Value         string `json:"value"`
}

type envVarJSON struct {
	ID             string            `json:"_id"`
	OrganizationID string            `json:"_organizationId"`
	Key            string            `json:"key"`
	Type           string            `json:"type"`
	IsSecret       bool              `json:"isSecret"`
	Values         []envVarValueJSON `json:"values"`
	CreatedAt      string            `json:"createdAt"`
	UpdatedAt      string            `json:"updatedAt"`
}

// envVarOut is a variable as the API shows it: secret values masked.
func envVarOut(v store.EnvironmentVariable) envVarJSON {
	out := envVarJSON{ID: v.ID, OrganizationID: v.OrganizationID, Key: v.Key, Type: v.Type, IsSecret: v.IsSecret,
		Values: make([]envVarValueJSON, 0, len(v.Values)), CreatedAt: formatTime(v.CreatedAt), UpdatedAt: formatTime(v.UpdatedAt)}
	for _, val := range v.Values {
		if v.IsSecret {
			val.Value = envVarMask
		}
		out.Values = append(out.Values, envVarValueJSON{EnvironmentID: val.EnvironmentID, Value: val.Value})
	}
	return out
}

func envVarNotFound(err error, key string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Environment variable "+strconv.Quote(key)+" was not found")
	}
	return err
}

// pathEnvVarKey is the {key} of the path; a key that cannot exist is a 404.
func pathEnvVarKey(r *http.Request) (string, error) {
	k := r.PathValue("key")
	if !validEnvVarKey(k) {
		return "", envVarNotFound(store.ErrNotFound, k)
	}
	return k, nil
}

// readEnvVarValues reads `values`: [{_environmentId, value}], each
// environment once.
func readEnvVarValues(o *object) []store.EnvironmentVariableValue {
	raw, ok := o.raw["values"]
	if !ok || isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) > maxEnvVarItems {
		o.fail("values", "must be an array of at most "+strconv.Itoa(maxEnvVarItems)+" {_environmentId, value}", raw)
		return nil
	}
	var out []store.EnvironmentVariableValue
	for i, it := range items {
		name := "values." + strconv.Itoa(i)
		io, err := parseObject(it)
		if err != nil {
			o.fail(name, "must be an object {_environmentId, value}", it)
			continue
		}
		io.prefix, io.errs = o.prefix+name+".", o.errs
		env := io.requiredText("_environmentId", maxString)
		if env != "" && !id.Valid(env) {
			io.fail("_environmentId", "must be a 24-character hex object id", io.raw["_environmentId"])
		}
		var val string
		if vr, ok := io.raw["value"]; !ok || json.Unmarshal(vr, &val) != nil {
			io.errs.add(io.prefix+"value", "is required and must be a string", rawValue(vr))
		} else if utf8.RuneCountInString(val) > maxEnvVarValue {
			io.fail("value", "must be at most "+strconv.Itoa(maxEnvVarValue)+" characters", vr)
		}
		if slices.ContainsFunc(out, func(v store.EnvironmentVariableValue) bool { return v.EnvironmentID == env }) {
			io.fail("_environmentId", "is named twice", io.raw["_environmentId"])
		}
		out = append(out, store.EnvironmentVariableValue{EnvironmentID: env, Value: val})
	}
	return out
}

// checkEnvVarValues refuses the mask as a value (400) and values for
// environments the caller may not write: one that is no environment of the
// organization is a 404; another environment of it a 403 for an API key,
// which is scoped to its own environment (dashboard sessions are not).
func (s *Server) checkEnvVarValues(r *http.Request, values []store.EnvironmentVariableValue) error {
	c := callerFrom(r.Context())
	var envs []store.Environment
	for _, v := range values {
		if v.Value == envVarMask {
			return errorf(http.StatusBadRequest, "The masked placeholder of a secret value cannot be saved as a value")
		}
		if v.EnvironmentID == c.EnvironmentID {
			continue
		}
		if envs == nil {
			var err error
			if envs, err = s.store.EnvironmentList(r.Context(), c.OrganizationID); err != nil {
				return err
			}
		}
		if !slices.ContainsFunc(envs, func(e store.Environment) bool { return e.ID == v.EnvironmentID }) {
			return errorf(http.StatusNotFound, "Environment "+strconv.Quote(v.EnvironmentID)+" was not found")
		}
		if !c.Session {
			return errorf(http.StatusForbidden, "This API key is scoped to a single environment: it may set values only for "+
				c.EnvironmentID)
		}
	}
	return nil
}

// envVarCreate serves POST /v1/environment-variables (200, as the client expects).
func (s *Server) envVarCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	key := o.requiredText("key", maxString)
	if key != "" && !validEnvVarKey(key) {
		o.fail("key", envVarKeyRule, o.raw["key"])
	}
	typ := o.oneOf("type", "string")
	if typ == "" {
		typ = "string"
	}
	secret := o.boolean("isSecret")
	values := readEnvVarValues(o)
	if err := o.errs.err(); err != nil {
		return err
	}
	if err := s.checkEnvVarValues(r, values); err != nil {
		return err
	}
	v, err := s.store.EnvironmentVariableCreate(r.Context(), &store.EnvironmentVariableCreateParams{
		Scope: callerFrom(r.Context()).Scope, Key: key, Type: typ, IsSecret: secret != nil && *secret, Values: values, Now: s.now()})
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "Environment variable "+strconv.Quote(key)+" already exists")
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, envVarOut(v))
	return nil
}

// envVarList serves GET /v1/environment-variables?search=.
func (s *Server) envVarList(w http.ResponseWriter, r *http.Request) error {
	search := r.URL.Query().Get("search")
	if utf8.RuneCountInString(search) > maxEnvVarKey {
		return invalid("search", "must be at most "+strconv.Itoa(maxEnvVarKey)+" characters", search)
	}
	vars, err := s.store.EnvironmentVariableList(r.Context(), callerFrom(r.Context()).Scope, search)
	if err != nil {
		return err
	}
	out := make([]envVarJSON, 0, len(vars))
	for _, v := range vars {
		out = append(out, envVarOut(v))
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) envVarGet(w http.ResponseWriter, r *http.Request) error {
	key, err := pathEnvVarKey(r)
	if err != nil {
		return err
	}
	v, err := s.store.EnvironmentVariableGet(r.Context(), callerFrom(r.Context()).Scope, key)
	if err != nil {
		return envVarNotFound(err, key)
	}
	s.writeJSON(w, http.StatusOK, envVarOut(v))
	return nil
}

// envVarPatch serves PATCH /v1/environment-variables/{key}: values merge
// by environment; key renames.
func (s *Server) envVarPatch(w http.ResponseWriter, r *http.Request) error {
	key, err := pathEnvVarKey(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	p := store.EnvironmentVariableUpdateParams{Scope: callerFrom(r.Context()).Scope, Key: key, Now: s.now()}
	if f := o.str("key", maxString); f.Value != nil {
		if !validEnvVarKey(*f.Value) {
			o.fail("key", envVarKeyRule, o.raw["key"])
		}
		p.NewKey = f.Value
	}
	if t := o.oneOf("type", "string"); t != "" {
		p.Type = &t
	}
	p.IsSecret = o.boolean("isSecret")
	p.Values = readEnvVarValues(o)
	if err := o.errs.err(); err != nil {
		return err
	}
	if p.NewKey == nil && p.Type == nil && p.IsSecret == nil && p.Values == nil {
		return errorf(http.StatusBadRequest, "At least one field must be provided to update")
	}
	if err := s.checkEnvVarValues(r, p.Values); err != nil {
		return err
	}
	v, err := s.store.EnvironmentVariableUpdate(r.Context(), &p)
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "Environment variable "+strconv.Quote(*p.NewKey)+" already exists")
	}
	if err != nil {
		return envVarNotFound(err, key)
	}
	s.writeJSON(w, http.StatusOK, envVarOut(v))
	return nil
}

func (s *Server) envVarDelete(w http.ResponseWriter, r *http.Request) error {
	key, err := pathEnvVarKey(r)
	if err != nil {
		return err
	}
	if err := s.store.EnvironmentVariableDelete(r.Context(), callerFrom(r.Context()).Scope, key); err != nil {
		return envVarNotFound(err, key)
	}
	writeNoContent(w)
	return nil
}

// envVarUsage serves GET /v1/environment-variables/{key}/usage: the
// workflows of the caller's environment whose step controls name env.KEY
// (not env.KEY_OTHER).
func (s *Server) envVarUsage(w http.ResponseWriter, r *http.Request) error {
	key, err := pathEnvVarKey(r)
	if err != nil {
		return err
	}
	scope := callerFrom(r.Context()).Scope
	if _, err := s.store.EnvironmentVariableGet(r.Context(), scope, key); err != nil {
		return envVarNotFound(err, key)
	}
	ref := regexp.MustCompile(`(^|[^A-Za-z0-9_.])env\.` + regexp.QuoteMeta(key) + `($|[^A-Za-z0-9_])`)
	type usage struct {
		Name       string `json:"name"`
		WorkflowID string `json:"workflowId"`
	}
	out := []usage{}
	const page = 100
	for offset := 0; ; offset += page {
		wfs, _, err := s.store.WorkflowList(r.Context(), &store.WorkflowListParams{Scope: scope, Offset: offset, Limit: page})
		if err != nil {
			return err
		}
		for _, wf := range wfs {
			for _, st := range wf.Steps {
				controls, err := json.Marshal(st.ControlValues)
				if err == nil && ref.Match(controls) {
					out = append(out, usage{Name: wf.Name, WorkflowID: wf.Key})
					break
				}
			}
		}
		if len(wfs) < page {
			break
		}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"workflows": out})
	return nil
}
