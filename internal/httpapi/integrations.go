package httpapi

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/herald-notify/herald/internal/engine"
	"net/http"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

var (
	filterTypes     = []string{"BOOLEAN", "TEXT", "DATE", "NUMBER", "STATEMENT", "LIST", "MULTI_LIST", "GROUP"}
	filterValues    = []string{"AND", "OR"}
	filterOperators = []string{"LARGER", "SMALLER", "LARGER_EQUAL", "SMALLER_EQUAL", "EQUAL", "NOT_EQUAL", "ALL_IN",
		"ANY_IN", "NOT_IN", "BETWEEN", "NOT_BETWEEN", "LIKE", "NOT_LIKE", "IN"}
	filterOn = []string{"subscriber", "payload"}
)

const (
	// maxCredentialString allows for long secrets such as service-account JSON.
	maxCredentialString = 16 << 10
	// maxConditions bounds an integration's conditions, and each one's children.
	maxConditions = 20
)

type integrationJSON struct {
	ID             string          `json:"_id"`
	EnvironmentID  string          `json:"_environmentId"`
	OrganizationID string          `json:"_organizationId"`
	Name           string          `json:"name"`
	Identifier     string          `json:"identifier"`
	ProviderID     string          `json:"providerId"`
	Channel        string          `json:"channel,omitempty"`
	Kind           string          `json:"kind"`
	Credentials    json.RawMessage `json:"credentials,omitempty"`
	Configurations json.RawMessage `json:"configurations"`
	Active         bool            `json:"active"`
	Deleted        bool            `json:"deleted"`
	DeletedAt      *string         `json:"deletedAt,omitempty"`
	DeletedBy      string          `json:"deletedBy,omitempty"`
	Primary        bool            `json:"primary"`
	Conditions     json.RawMessage `json:"conditions"`
	CreatedAt      string          `json:"createdAt"`
	UpdatedAt      string          `json:"updatedAt"`
}

// integrationOut renders an integration; only session callers get
// credentials and the secret fields of configurations.
func integrationOut(in store.Integration, c caller) integrationJSON {
	confs := orDefault(in.Configurations, "{}")
	if !c.Session {
		confs = withoutSecretConfigurations(confs)
	}
	out := integrationJSON{
		ID: in.ID, EnvironmentID: in.EnvironmentID, OrganizationID: in.OrganizationID, Name: in.Name,
		Identifier: in.Identifier, ProviderID: in.ProviderID, Channel: in.Channel, Kind: in.Kind,
		Configurations: json.RawMessage(confs), Active: in.Active, Deleted: in.Deleted,
		DeletedAt: formatTimePtr(in.DeletedAt), DeletedBy: in.DeletedBy, Primary: in.Primary,
		Conditions: json.RawMessage(orDefault(in.Conditions, "[]")),
		CreatedAt:  formatTime(in.CreatedAt), UpdatedAt: formatTime(in.UpdatedAt),
	}
	if c.Session {
		out.Credentials = json.RawMessage(orDefault(in.Credentials, "{}"))
	}
	return out
}

// withoutSecretConfigurations drops the secret fields of a configurations object.
func withoutSecretConfigurations(confs []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(confs, &m) != nil {
		return confs
	}
	found := false
	for k := range m {
		if store.IsSecretConfiguration(k) {
			delete(m, k)
			found = true
		}
	}
	if !found {
		return confs
	}
	out, _ := json.Marshal(m)
	return out
}

// keepSecretConfigurations carries the stored secret fields that sent
// configurations omit over into them: API-key callers never see those
// fields, so sending back what they read must not erase them. A secret
// field sent as null is removed; configurations sent as null clear all.
func keepSecretConfigurations(sentRaw json.RawMessage, sent, stored store.JSON) store.JSON {
	var keys, old, out map[string]json.RawMessage
	if json.Unmarshal(sentRaw, &keys) != nil || keys == nil || json.Unmarshal(stored, &old) != nil ||
		json.Unmarshal(sent, &out) != nil || out == nil {
		return sent
	}
	kept := false
	for k, v := range old {
		if _, ok := keys[k]; !ok && store.IsSecretConfiguration(k) {
			out[k] = v
			kept = true
		}
	}
	if !kept {
		return sent
	}
	b, _ := json.Marshal(out)
	return b
}

func orDefault(v store.JSON, def string) []byte {
	if len(v) == 0 {
		return []byte(def)
	}
	return v
}

func integrationsOut(ins []store.Integration, c caller) []integrationJSON {
	out := make([]integrationJSON, 0, len(ins))
	for _, in := range ins {
		out = append(out, integrationOut(in, c))
	}
	return out
}

// readIntegrationCredentials validates the credentials object against the
// keys of the provider registry (provider.Registry.CredentialKeys: any key a
// provider reads, of its type) and returns it re-encoded with only those.
func (s *Server) readIntegrationCredentials(o *object) (store.JSON, bool) {
	if !o.has("credentials") {
		return nil, false
	}
	c := o.sub("credentials")
	if c == nil {
		return nil, !o.errs.has(o.prefix + "credentials")
	}
	keys := s.providers.CredentialKeys()
	known := make([]string, len(keys))
	out := map[string]any{}
	for i, k := range keys {
		known[i] = k.Key
		switch k.Type {
		case provider.TypeBoolean:
			if b := c.boolean(k.Key); b != nil {
				out[k.Key] = *b
			}
		case provider.TypeObject:
			if v, set := c.jsonObject(k.Key, maxDataBytes); set && v != nil {
				out[k.Key] = v
			}
		default:
			if f := c.str(k.Key, maxCredentialString); f.Value != nil {
				out[k.Key] = *f.Value
			}
		}
	}
	c.onlyKnown(known...)
	b, _ := json.Marshal(out)
	return b, true
}

func (f fieldErrors) has(name string) bool { _, ok := f[name]; return ok }

func readConfigurations(o *object) (store.JSON, bool) {
	if !o.has("configurations") {
		return nil, false
	}
	c := o.sub("configurations")
	if c == nil {
		return store.JSON("{}"), !o.errs.has(o.prefix + "configurations")
	}
	c.onlyKnown("inboundWebhookEnabled", "inboundWebhookSigningKey", "maxConcurrency")
	out := map[string]any{}
	if b := c.boolean("inboundWebhookEnabled"); b != nil {
		out["inboundWebhookEnabled"] = *b
	}
	if n := c.integer("maxConcurrency", 1, engine.MaxIntegrationConcurrency); n != nil {
		out["maxConcurrency"] = *n
	}
	if f := c.str("inboundWebhookSigningKey", maxString); f.Value != nil {
		out["inboundWebhookSigningKey"] = *f.Value
	}
	b, _ := json.Marshal(out)
	return b, true
}

// readConditions validates an array of StepFilter.
func readConditions(o *object) (store.JSON, bool) {
	raw, ok := o.raw["conditions"]
	if !ok {
		return nil, false
	}
	if isNull(raw) {
		return store.JSON("[]"), true
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		o.fail("conditions", "must be an array of step filters", raw)
		return nil, false
	}
	if len(items) > maxConditions {
		o.errs.add(o.prefix+"conditions", fmt.Sprintf("must have at most %d items", maxConditions), len(items))
		return nil, false
	}
	type part struct {
		Field    string `json:"field"`
		Value    string `json:"value"`
		Operator string `json:"operator"`
		On       string `json:"on"`
	}
	type filter struct {
		IsNegated bool   `json:"isNegated"`
		Type      string `json:"type"`
		Value     string `json:"value"`
		Children  []part `json:"children"`
	}
	out := make([]filter, 0, len(items))
	for i, it := range items {
		name := "conditions." + strconv.Itoa(i)
		f, err := parseObject(it)
		if err != nil {
			o.fail(name, "must be an object", it)
			continue
		}
		f.prefix, f.errs = o.prefix+name+".", o.errs
		fl := filter{Children: []part{}}
		if b := f.boolean("isNegated"); b != nil {
			fl.IsNegated = *b
		}
		fl.Type = f.requiredOneOf("type", filterTypes...)
		fl.Value = f.requiredOneOf("value", filterValues...)
		var children []json.RawMessage
		if c, ok := f.raw["children"]; ok && !isNull(c) {
			if err := json.Unmarshal(c, &children); err != nil {
				f.fail("children", "must be an array", c)
			}
			if len(children) > maxConditions {
				f.errs.add(f.prefix+"children", fmt.Sprintf("must have at most %d items", maxConditions), len(children))
				children = nil
			}
		}
		for j, c := range children {
			p, err := parseObject(c)
			if err != nil {
				f.fail("children."+strconv.Itoa(j), "must be an object", c)
				continue
			}
			p.prefix, p.errs = f.prefix+"children."+strconv.Itoa(j)+".", o.errs
			fl.Children = append(fl.Children, part{
				Field: p.text("field", maxString), Value: p.text("value", maxString),
				// Required: the document (and the established SDK) show both as enumerations.
				Operator: p.requiredOneOf("operator", filterOperators...), On: p.requiredOneOf("on", filterOn...),
			})
		}
		out = append(out, fl)
	}
	b, _ := json.Marshal(out)
	return b, true
}

func randomSuffix() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func (s *Server) integrationCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	providerID := o.requiredText("providerId", maxString)
	info, known := provider.Lookup(providerID)
	if providerID != "" && !known {
		o.fail("providerId", "is not a known provider", o.raw["providerId"])
	}
	channel := o.oneOf("channel", "in_app", "email", "sms", "chat", "push")
	if known && channel != "" && channel != string(info.Channel) {
		if info.Kind == provider.Agent {
			o.fail("channel", "must be absent for an agent integration", o.raw["channel"])
		} else {
			o.fail("channel", "must be "+string(info.Channel)+" for provider "+providerID, o.raw["channel"])
		}
	}
	name := o.text("name", maxString)
	identifier := ""
	if f := o.indexed("identifier"); f.Value != nil {
		identifier = *f.Value
	}
	active := o.boolean("active")
	creds, _ := s.readIntegrationCredentials(o)
	confs, _ := readConfigurations(o)
	conds, _ := readConditions(o)
	if err := o.errs.err(); err != nil {
		return err
	}
	if err := s.checkCredentials(providerID, active != nil && *active, creds); err != nil {
		return err
	}
	if name == "" {
		name = providerID
	}
	if identifier == "" {
		identifier = providerID + "-" + randomSuffix()
	}
	c := callerFrom(r.Context())
	now := s.now()
	in := store.Integration{
		ID: id.New(), OrganizationID: c.OrganizationID, EnvironmentID: c.EnvironmentID, ProviderID: providerID,
		Channel: string(info.Channel), Kind: string(info.Kind), Name: name, Identifier: identifier,
		Credentials: creds, Configurations: confs, Conditions: conds, Active: active != nil && *active,
		CreatedAt: now, UpdatedAt: now,
	}
	if err := s.store.IntegrationCreate(r.Context(), &in); err != nil {
		return identifierConflict(err, identifier)
	}
	s.writeJSON(w, http.StatusCreated, integrationOut(in, c))
	return nil
}

// checkCredentials refuses an active integration of a provider Herald
// delivers through whose credentials lack a key the provider needs, or whose
// baseUrl is not an http(s) URL. Inactive integrations may be drafts.
func (s *Server) checkCredentials(providerID string, active bool, creds store.JSON) error {
	e, ok := s.providers.Get(providerID)
	if !ok {
		return nil
	}
	c, err := provider.ParseCredentials(creds)
	if err != nil {
		return nil // readIntegrationCredentials has refused it already
	}
	errs := fieldErrors{}
	if active {
		for _, k := range e.Missing(c) {
			errs.add("credentials."+k, "is required by "+providerID, nil)
		}
	}
	if c.String("baseUrl") != "" && providerID != "generic-sms" {
		if _, err := provider.BaseURL(c, ""); err != nil {
			errs.add("credentials.baseUrl", "must be an http or https URL", c.String("baseUrl"))
		}
	}
	return errs.err()
}

func identifierConflict(err error, identifier string) error {
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "An integration with identifier "+strconv.Quote(identifier)+" already exists")
	}
	return err
}

func (s *Server) integrationList(w http.ResponseWriter, r *http.Request) error {
	return s.listIntegrations(w, r, false)
}

func (s *Server) integrationListActive(w http.ResponseWriter, r *http.Request) error {
	return s.listIntegrations(w, r, true)
}

// listIntegrations lists the organization's integrations: organization-wide, as the
// established API lists the active ones (docs/api-behaviour.md, "Integrations").
func (s *Server) listIntegrations(w http.ResponseWriter, r *http.Request, activeOnly bool) error {
	c := callerFrom(r.Context())
	ins, err := s.store.IntegrationList(r.Context(), &store.IntegrationListParams{OrganizationID: c.OrganizationID, ActiveOnly: activeOnly})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, integrationsOut(ins, c))
	return nil
}

func pathIntegrationID(r *http.Request) (string, error) {
	// Hex is case-insensitive: an upper-case id names the same integration.
	v := strings.ToLower(r.PathValue("integrationId"))
	if !id.Valid(v) {
		return "", invalid("integrationId", "must be a 24-character hex identifier", v)
	}
	return v, nil
}

func integrationNotFound(err error, iid string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Integration "+iid+" was not found")
	}
	return err
}

func (s *Server) integrationUpdate(w http.ResponseWriter, r *http.Request) error {
	iid, err := pathIntegrationID(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	name := o.str("name", maxString)
	identifier := o.indexed("identifier")
	active := o.boolean("active")
	creds, credsSet := s.readIntegrationCredentials(o)
	confs, confsSet := readConfigurations(o)
	conds, condsSet := readConditions(o)
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", name.Value}, {"identifier", identifier.Value}} {
		if f.v != nil && *f.v == "" {
			o.fail(f.name, "must not be empty", o.raw[f.name])
		}
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	c := callerFrom(r.Context())
	in, err := s.store.IntegrationGet(r.Context(), c.Scope, iid)
	if err != nil {
		return integrationNotFound(err, iid)
	}
	if name.Value != nil {
		in.Name = *name.Value
	}
	if identifier.Value != nil {
		in.Identifier = *identifier.Value
	}
	if active != nil {
		in.Active = *active
	}
	if credsSet {
		in.Credentials = creds
	}
	if confsSet {
		in.Configurations = keepSecretConfigurations(o.raw["configurations"], confs, in.Configurations)
	}
	if condsSet {
		in.Conditions = conds
	}
	if err := s.checkCredentials(in.ProviderID, in.Active, in.Credentials); err != nil {
		return err
	}
	in.UpdatedAt = s.now()
	if err := s.store.IntegrationUpdate(r.Context(), &in); err != nil {
		return integrationNotFound(identifierConflict(err, in.Identifier), iid)
	}
	s.writeJSON(w, http.StatusOK, integrationOut(in, c))
	return nil
}

// integrationDelete soft-deletes and answers with the environment's remaining
// integrations, as the established service does.
func (s *Server) integrationDelete(w http.ResponseWriter, r *http.Request) error {
	iid, err := pathIntegrationID(r)
	if err != nil {
		return err
	}
	c := callerFrom(r.Context())
	if err := s.store.IntegrationDelete(r.Context(), &store.IntegrationDeleteParams{Scope: c.Scope, ID: iid,
		DeletedBy: c.ActorID, Now: s.now()}); err != nil {
		return integrationNotFound(err, iid)
	}
	ins, err := s.store.IntegrationList(r.Context(), &store.IntegrationListParams{OrganizationID: c.OrganizationID, EnvironmentID: c.EnvironmentID})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, integrationsOut(ins, c))
	return nil
}

func (s *Server) integrationSetPrimary(w http.ResponseWriter, r *http.Request) error {
	iid, err := pathIntegrationID(r)
	if err != nil {
		return err
	}
	c := callerFrom(r.Context())
	// set-primary activates: the credentials must be complete.
	cur, err := s.store.IntegrationGet(r.Context(), c.Scope, iid)
	if err != nil {
		return integrationNotFound(err, iid)
	}
	if err := s.checkCredentials(cur.ProviderID, true, cur.Credentials); err != nil {
		return err
	}
	in, err := s.store.IntegrationSetPrimary(r.Context(), &store.IntegrationSetPrimaryParams{Scope: c.Scope, ID: iid, Now: s.now()})
	if err != nil {
		return integrationNotFound(err, iid)
	}
	s.writeJSON(w, http.StatusOK, integrationOut(in, c))
	return nil
}
