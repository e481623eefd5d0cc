// Package sms holds what the SMS providers share: the message's recipient
// and sender, and the answer helpers of their wire fakes.
package sms

import (
	"encoding/json"
	"net/http"

	"github.com/herald-notify/herald/internal/provider"
)

// Parties returns the phone number an SMS goes to and its sender (the
// message's From, else the integration's from credential).
func Parties(c provider.Credentials, m *provider.Message) (to, from string, err error) {
	if len(m.To) == 0 || m.To[0] == "" {
		return "", "", provider.Permanentf("Subscriber missing recipient details")
	}
	from = c.String("from")
	if m.From != "" {
		from = m.From
	}
	return m.To[0], from, nil
}

// JSONAnswer writes a JSON answer (fakes).
func JSONAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
