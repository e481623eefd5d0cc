package provider

import "sort"

// CredentialKey is one key an integration's credentials may hold, across
// the registry: what the API accepts, how the OpenAPI document describes
// it, and which providers read it.
type CredentialKey struct {
	Key string
	// Type is its value's JSON type (TypeString, TypeBoolean, TypeObject).
	Type string
	// Secret: a provider keeps a secret in it.
	Secret bool
	// ReadBy are the registered providers that read it, sorted; empty for a
	// key only providers Herald does not deliver through read.
	ReadBy []string
	// RequiredBy are those of ReadBy that cannot send without it.
	RequiredBy []string
}

// otherCredentials are the credential keys of the catalogue's providers
// that Herald stores but does not deliver through (Novu's keys that no
// registered provider reads): an integration of any provider may hold them,
// as in Novu. A key a registered provider reads belongs in its entry
// instead; NewRegistry refuses one listed in both.
var otherCredentials = []Credential{
	{Key: "messageProfileId"}, {Key: "clientId"}, {Key: "redirectUrl"}, {Key: "instanceId"},
	{Key: "alertUid"}, {Key: "title"}, {Key: "imageUrl"}, {Key: "state"}, {Key: "externalLink"},
	{Key: "channelId"}, {Key: "phoneNumberIdentification"}, {Key: "accessKey", Secret: true},
	{Key: "appSid"}, {Key: "senderId"}, {Key: "tenantId"}, {Key: "AppIOBaseUrl"},
	{Key: "signingSecret", Secret: true}, {Key: "outboundIntegrationId"}, {Key: "fromAddressOverride"},
	{Key: "hmac", Type: TypeBoolean}, {Key: "useFromAddressOverride", Type: TypeBoolean},
}

// CredentialKeys lists every key an integration's credentials may hold,
// sorted by key: those the registered providers read and those of
// otherCredentials.
func (r *Registry) CredentialKeys() []CredentialKey { return r.keys }

// credentialKeys gathers the keys of the entries (ids in order) and the
// catalogue's other keys, each once.
func credentialKeys(ids []string, byID map[string]Entry) []CredentialKey {
	byKey := map[string]*CredentialKey{}
	add := func(provider string, c Credential) {
		k := byKey[c.Key]
		if k == nil {
			k = &CredentialKey{Key: c.Key, Type: c.JSONType(), Secret: c.Secret}
			byKey[c.Key] = k
		} else if k.Type != c.JSONType() || k.Secret != c.Secret {
			panic("provider: credential key " + c.Key + " of " + provider + " differs in type or secrecy from its other uses")
		}
		if provider == "" {
			return
		}
		k.ReadBy = append(k.ReadBy, provider)
		if c.Required {
			k.RequiredBy = append(k.RequiredBy, provider)
		}
	}
	for _, id := range ids {
		for _, c := range byID[id].Credentials {
			add(id, c)
		}
	}
	for _, c := range otherCredentials {
		if k := byKey[c.Key]; k != nil && len(k.ReadBy) > 0 {
			panic("provider: credential key " + c.Key + " is read by " + k.ReadBy[0] + ": list it in its entry only")
		}
		add("", c)
	}
	out := make([]CredentialKey, 0, len(byKey))
	for _, k := range byKey {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
