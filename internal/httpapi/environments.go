package httpapi

import (
	"net/http"

	"github.com/herald-notify/herald/internal/store"
)

// GET /v1/environments/me and GET /v1/environments: where an app's backend
// (or a dashboard) finds an environment's public application identifier,
// the applicationIdentifier of the inbox clients. API keys are never shown:
// Herald keeps only their hashes and encrypted copies.

type environmentJSON struct {
	ID             string  `json:"_id"`
	Name           string  `json:"name"`
	OrganizationID string  `json:"_organizationId"`
	Identifier     string  `json:"identifier"`
	Type           *string `json:"type"`
	ParentID       string  `json:"_parentId,omitempty"`
	Color          string  `json:"color,omitempty"`
	// APIKeys holds the key of an environment just created, in the answer
	// of its creation only.
	APIKeys []apiKeyJSON `json:"apiKeys,omitempty"`
}

func environmentOut(e store.Environment) environmentJSON {
	out := environmentJSON{ID: e.ID, Name: e.Name, OrganizationID: e.OrganizationID, Identifier: e.Identifier, ParentID: e.ParentID,
		Color: e.Color}
	if t := e.Type(); t != "" {
		out.Type = &t
	}
	return out
}

// environmentMe serves GET /v1/environments/me: the caller's environment.
func (s *Server) environmentMe(w http.ResponseWriter, r *http.Request) error {
	env, err := s.store.EnvironmentGetByID(r.Context(), callerFrom(r.Context()).EnvironmentID)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, environmentOut(env))
	return nil
}

// environmentList serves GET /v1/environments: the environments of the
// caller's organization, oldest first.
func (s *Server) environmentList(w http.ResponseWriter, r *http.Request) error {
	envs, err := s.store.EnvironmentList(r.Context(), callerFrom(r.Context()).OrganizationID)
	if err != nil {
		return err
	}
	out := make([]environmentJSON, len(envs))
	for i, e := range envs {
		out[i] = environmentOut(e)
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}
