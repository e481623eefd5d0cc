package provider

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// nopSender sends nothing; testEntry's constructor hands out one that keeps its Config.
type nopSender struct{ cfg Config }

func (*nopSender) Send(context.Context, *Message) (*Result, error) { return &Result{}, nil }

func testEntry(id string, ch Channel, creds ...Credential) Entry {
	return Entry{ID: id, Channel: ch, Credentials: creds, New: func(cfg Config) (Sender, error) { return &nopSender{cfg: cfg}, nil }}
}

func TestCredentialSchema(t *testing.T) {
	t.Parallel()
	e := testEntry("sendgrid", Email,
		Credential{Key: "apiKey", Required: true, Secret: true},
		Credential{Key: "from", Required: true},
		Credential{Key: "secure", Type: TypeBoolean, Required: true},
		Credential{Key: "baseUrl"})
	require.Equal(t, []string{"apiKey", "from", "secure"}, e.Required())

	for _, tc := range []struct {
		name    string
		creds   Credentials
		missing []string
		secrets []string
	}{
		{name: "complete", creds: Credentials{"apiKey": "SG.key", "from": "a@b.test", "secure": false, "baseUrl": "https://x.test"},
			secrets: []string{"SG.key"}},
		{name: "empty strings are missing", creds: Credentials{"apiKey": " ", "from": "", "secure": true},
			missing: []string{"apiKey", "from"}},
		{name: "a boolean as a string", creds: Credentials{"apiKey": "SG.key", "from": "a@b.test", "secure": "true"},
			secrets: []string{"SG.key"}},
		{name: "short secrets are not redacted", creds: Credentials{"apiKey": "abc"}, missing: []string{"from", "secure"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.missing, e.Missing(tc.creds))
			require.Equal(t, tc.secrets, e.Secrets(tc.creds))
		})
	}

	s, err := e.Sender(Config{Credentials: Credentials{"apiKey": "SG.key", "from": "from-is-no-secret"}})
	require.NoError(t, err)
	require.Equal(t, []string{"SG.key"}, s.(*nopSender).cfg.Secrets(), "Sender hands the entry's secret values to the constructor")
	s, err = e.New(Config{Credentials: Credentials{"apiKey": "SG.key"}})
	require.NoError(t, err)
	require.Empty(t, s.(*nopSender).cfg.Secrets(), "only Sender knows which keys are secret")
}

func TestRegistryCredentialKeys(t *testing.T) {
	t.Parallel()
	r := NewRegistry(
		testEntry("sendgrid", Email, Credential{Key: "apiKey", Required: true, Secret: true}, Credential{Key: "from", Required: true},
			Credential{Key: "baseUrl"}),
		testEntry("expo", Push, Credential{Key: "apiKey", Secret: true}, Credential{Key: "secure", Type: TypeBoolean}),
	)
	byKey := map[string]CredentialKey{}
	var order []string
	for _, k := range r.CredentialKeys() {
		byKey[k.Key] = k
		order = append(order, k.Key)
	}
	require.IsIncreasing(t, order, "sorted, each key once")
	require.Equal(t, CredentialKey{Key: "apiKey", Type: TypeString, Secret: true, ReadBy: []string{"expo", "sendgrid"},
		RequiredBy: []string{"sendgrid"}}, byKey["apiKey"])
	require.Equal(t, CredentialKey{Key: "secure", Type: TypeBoolean, ReadBy: []string{"expo"}}, byKey["secure"])
	require.Equal(t, CredentialKey{Key: "hmac", Type: TypeBoolean}, byKey["hmac"], "the catalogue's other providers' keys")
	require.Equal(t, CredentialKey{Key: "accessKey", Type: TypeString, Secret: true}, byKey["accessKey"])
	require.Len(t, byKey, 4+len(otherCredentials))

	for _, tc := range []struct {
		name    string
		entries []Entry
	}{
		{"a key of two types", []Entry{testEntry("sendgrid", Email, Credential{Key: "secure"}),
			testEntry("apns", Push, Credential{Key: "secure", Type: TypeBoolean})}},
		{"a key secret for one provider only", []Entry{testEntry("sendgrid", Email, Credential{Key: "apiKey", Secret: true}),
			testEntry("expo", Push, Credential{Key: "apiKey"})}},
		{"a registered provider's key among the catalogue's others", []Entry{testEntry("sendgrid", Email,
			Credential{Key: "clientId"})}},
		{"an id twice", []Entry{testEntry("sendgrid", Email), testEntry("sendgrid", Email)}},
		{"a channel the catalogue does not give it", []Entry{testEntry("sendgrid", SMS)}},
	} {
		require.Panics(t, func() { NewRegistry(tc.entries...) }, tc.name)
	}
}
