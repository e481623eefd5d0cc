package httpapi

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/tenant"
)

// POST /v1/environments, PUT and DELETE /v1/environments/{environmentId},
// GET /v2/environments/{environmentId}/tags. Herald's API keys are the
// organization's credentials: any may create or delete an environment, but a
// key changes only its own environment's settings — another environment's
// are a dashboard session's to change (403).

// protectedEnvironments cannot be deleted or renamed: every organization
// has them, and Herald finds them by name (the CLI's --environment, type).
var protectedEnvironments = map[string]bool{"development": true, "production": true}

var (
	hexColor          = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$`)
	identifierPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)
)

type apiKeyJSON struct {
	Key    string `json:"key"`
	UserID string `json:"_userId"`
}

// orgEnvironment finds an environment of the caller's organization by its
// _id (or, with byIdentifier, its application identifier as well); another
// organization's environment is not found.
func (s *Server) orgEnvironment(r *http.Request, ref string, byIdentifier bool) (store.Environment, error) {
	var env store.Environment
	err := store.ErrNotFound
	if id.Valid(ref) {
		env, err = s.store.EnvironmentGetByID(r.Context(), ref)
	}
	if errors.Is(err, store.ErrNotFound) && byIdentifier {
		env, err = s.store.EnvironmentGetByIdentifier(r.Context(), ref)
	}
	if err == nil && env.OrganizationID != callerFrom(r.Context()).OrganizationID {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		return env, errorf(http.StatusNotFound, "Environment "+strconv.Quote(ref)+" was not found")
	}
	return env, err
}

// environmentParent reads parentId: an environment of the caller's organization.
func (s *Server) environmentParent(r *http.Request, o *object) *string {
	f := o.str("parentId", 24)
	if !f.Set || f.Value == nil {
		return nil
	}
	if !id.Valid(*f.Value) {
		o.fail("parentId", "must be a 24-character hex identifier", o.raw["parentId"])
		return nil
	}
	if _, err := s.orgEnvironment(r, *f.Value, false); err != nil {
		o.fail("parentId", "must name an environment of the organization", o.raw["parentId"])
		return nil
	}
	return f.Value
}

func readColor(o *object) *string {
	f := o.str("color", 9)
	if f.Value != nil && !hexColor.MatchString(*f.Value) {
		o.fail("color", "must be a hex colour such as #4f46e5", o.raw["color"])
		return nil
	}
	return f.Value
}

func readEnvironmentName(o *object, required bool) *string {
	if required {
		name := o.requiredText("name", 100)
		return &name
	}
	f := o.str("name", 100)
	if f.Set && (f.Value == nil || *f.Value == "") {
		o.fail("name", "must be 1 to 100 characters", o.raw["name"])
		return nil
	}
	return f.Value
}

// environmentCreate serves POST /v1/environments: a new environment with
// its own API key — shown in apiKeys of this answer only — and the built-in
// in-app integration, as on first start.
func (s *Server) environmentCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	c := callerFrom(r.Context())
	name := readEnvironmentName(o, true)
	color := readColor(o)
	parent := s.environmentParent(r, o)
	if err := o.errs.err(); err != nil {
		return err
	}
	if parent == nil {
		if dev, err := s.orgEnvironmentNamed(r, "development"); err == nil {
			parent = &dev.ID
		}
	}
	key := secret.NewAPIKey()
	p := tenant.NewEnvironment(c.OrganizationID, *name, orEmpty(parent), key, s.now())
	if color != nil {
		p.Environment.Color = *color
	}
	if err := s.store.EnvironmentCreate(r.Context(), &p); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return errorf(http.StatusConflict, "An environment named "+strconv.Quote(*name)+" already exists")
		}
		return err
	}
	out := environmentOut(p.Environment)
	out.APIKeys = []apiKeyJSON{{Key: key, UserID: c.ActorID}}
	secretAnswer(w)
	s.writeJSON(w, http.StatusCreated, out)
	return nil
}

// orgEnvironmentNamed finds the caller's organization's environment of that name.
func (s *Server) orgEnvironmentNamed(r *http.Request, name string) (store.Environment, error) {
	envs, err := s.store.EnvironmentList(r.Context(), callerFrom(r.Context()).OrganizationID)
	if err != nil {
		return store.Environment{}, err
	}
	for _, e := range envs {
		if e.Name == name {
			return e, nil
		}
	}
	return store.Environment{}, store.ErrNotFound
}

// settableEnvironment is the environment of the path that the caller may
// change: an API key its own, a dashboard session any of its organization's.
func (s *Server) settableEnvironment(r *http.Request) (store.Environment, error) {
	env, err := s.orgEnvironment(r, r.PathValue("environmentId"), false)
	if err != nil {
		return env, err
	}
	if c := callerFrom(r.Context()); !c.Session && env.ID != c.EnvironmentID {
		return env, errorf(http.StatusForbidden, "An API key may change only its own environment")
	}
	return env, nil
}

// environmentUpdate serves PUT /v1/environments/{environmentId}: name,
// identifier, parentId and color; dns and bridge are accepted and ignored.
func (s *Server) environmentUpdate(w http.ResponseWriter, r *http.Request) error {
	env, err := s.settableEnvironment(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	p := store.EnvironmentUpdateParams{ID: env.ID, Name: readEnvironmentName(o, false), Color: readColor(o),
		ParentID: s.environmentParent(r, o)}
	if f := o.str("identifier", 100); f.Set {
		if f.Value == nil || !identifierPattern.MatchString(*f.Value) {
			o.fail("identifier", "must be 1 to 100 letters, digits, '-' or '_'", o.raw["identifier"])
		} else {
			p.Identifier = f.Value
		}
	}
	if p.ParentID != nil && *p.ParentID == env.ID {
		o.fail("parentId", "must name another environment", o.raw["parentId"])
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	if p.Name != nil && *p.Name != env.Name && protectedEnvironments[env.Name] {
		return errorf(http.StatusBadRequest, "The "+env.Name+" environment is protected: its name cannot change")
	}
	env, err = s.store.EnvironmentUpdate(r.Context(), &p)
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "Another environment of the organization has this name or identifier")
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, environmentOut(env))
	return nil
}

// environmentDelete serves DELETE /v1/environments/{environmentId}: its
// API keys stop working, its integrations are removed, its other data is
// kept but unreachable. Any key or session of the organization may delete
// an environment (as any may create one); development and production are
// protected (400).
func (s *Server) environmentDelete(w http.ResponseWriter, r *http.Request) error {
	env, err := s.orgEnvironment(r, r.PathValue("environmentId"), false)
	if err != nil {
		return err
	}
	if protectedEnvironments[env.Name] {
		return errorf(http.StatusBadRequest, "The "+env.Name+" environment is protected and cannot be deleted")
	}
	if err := s.store.EnvironmentDelete(r.Context(), &store.EnvironmentDeleteParams{OrganizationID: env.OrganizationID, ID: env.ID,
		Now: s.now()}); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	return nil
}

// environmentTags serves GET /v2/environments/{environmentId}/tags (its
// _id or application identifier): the distinct tags of its workflows.
func (s *Server) environmentTags(w http.ResponseWriter, r *http.Request) error {
	env, err := s.orgEnvironment(r, r.PathValue("environmentId"), true)
	if err != nil {
		return err
	}
	tags, err := s.store.WorkflowTags(r.Context(), store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID})
	if err != nil {
		return err
	}
	out := make([]map[string]string, len(tags))
	for i, t := range tags {
		out[i] = map[string]string{"name": t}
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
