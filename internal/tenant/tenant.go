// Package tenant says what an environment is made of when it is created —
// on first start (app.Bootstrap) or through the API (POST /v1/environments):
// its record with a public application identifier, an API key, and the
// built-in in-app integration that its inbox delivers through.
package tenant

import (
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// NewEnvironment is a new environment of an organization with everything
// it needs to work: apiKey (in the clear; the store keeps its hash and an
// encrypted copy) and the in-app integration.
func NewEnvironment(organizationID, name, parentID, apiKey string, now time.Time) store.EnvironmentCreateParams {
	env := store.Environment{ID: id.New(), OrganizationID: organizationID, Name: name, Identifier: secret.NewApplicationIdentifier(),
		ParentID: parentID, CreatedAt: now}
	return store.EnvironmentCreateParams{
		Environment: env,
		APIKeys:     []store.APIKey{NewKeyRecord(env.ID, apiKey, now)},
		Integrations: []store.Integration{{
			ID: id.New(), OrganizationID: organizationID, EnvironmentID: env.ID, ProviderID: provider.InAppProvider,
			Channel: string(provider.InApp), Kind: string(provider.Delivery), Name: "Herald Inbox",
			Identifier: "herald-inbox", Active: true, Primary: true, CreatedAt: now, UpdatedAt: now,
		}},
	}
}

// NewKeyRecord is the stored form of a new API key: its hash, and the key
// itself for the store to keep encrypted (it checks inbox subscriberHash
// values).
func NewKeyRecord(environmentID, key string, now time.Time) store.APIKey {
	return store.APIKey{ID: id.New(), EnvironmentID: environmentID, Hash: secret.HashAPIKey(key), Prefix: key[:min(len(key), 7)],
		Key: key, CreatedAt: now}
}
