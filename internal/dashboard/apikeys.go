package dashboard

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
)

// apiKeyJSON is an API key as the dashboard lists it: never the key, only
// its first characters (the key itself only in the answer that creates it).
type apiKeyJSON struct {
	ID        string  `json:"_id"`
	Prefix    string  `json:"prefix"`
	Masked    string  `json:"masked"`
	CreatedAt string  `json:"createdAt"`
	RevokedAt *string `json:"revokedAt"`
	Key       string  `json:"key,omitempty"`
}

func apiKeyOut(k store.APIKey) apiKeyJSON {
	return apiKeyJSON{ID: k.ID, Prefix: k.Prefix, Masked: k.Prefix + strings.Repeat("•", 12), CreatedAt: wire.Time(k.CreatedAt),
		RevokedAt: wire.TimePtr(k.RevokedAt)}
}

// GET /dashboard/api/env/{env}/api-keys lists the environment's keys, masked.
func (d *Dashboard) apiKeyList(w http.ResponseWriter, r *http.Request, _ account, env store.Environment) error {
	keys, err := d.store.APIKeyList(r.Context(), env.ID)
	if err != nil {
		return err
	}
	out := make([]apiKeyJSON, 0, len(keys))
	for _, k := range keys {
		out = append(out, apiKeyOut(k))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

// POST /dashboard/api/env/{env}/api-keys makes a key and shows it, once.
func (d *Dashboard) apiKeyCreate(w http.ResponseWriter, r *http.Request, _ account, env store.Environment) error {
	key := secret.NewAPIKey()
	rec := app.NewKeyRecord(env.ID, key, d.now())
	if err := d.store.APIKeyCreate(r.Context(), &rec); err != nil {
		return err
	}
	out := apiKeyOut(rec)
	out.Key = key
	writeJSON(w, http.StatusCreated, map[string]any{"data": out})
	return nil
}

// DELETE /dashboard/api/env/{env}/api-keys/{id} revokes a key of the
// environment; a key of another environment is a 404.
func (d *Dashboard) apiKeyRevoke(w http.ResponseWriter, r *http.Request, _ account, env store.Environment) error {
	if !objectID.MatchString(r.PathValue("id")) {
		return errorf(http.StatusUnprocessableEntity, "An API key's id is 24 hexadecimal characters")
	}
	if err := d.store.APIKeyRevoke(r.Context(), &store.APIKeyRevokeParams{EnvironmentID: env.ID, ID: r.PathValue("id"), Now: d.now()}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

var objectID = regexp.MustCompile(`^[0-9a-f]{24}$`)
