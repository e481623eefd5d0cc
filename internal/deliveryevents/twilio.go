package deliveryevents

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // Twilio signs with HMAC-SHA1
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/herald-notify/herald/internal/store"
)

// Twilio's status callbacks: an application/x-www-form-urlencoded post per
// change of a message's status, signed in X-Twilio-Signature with the
// account's auth token (the integration's credentials.token): base64
// HMAC-SHA1 of the URL followed by each parameter's name and value, sorted
// by name.

// TwilioSignatureHeader is Twilio's signature header.
const TwilioSignatureHeader = "X-Twilio-Signature"

var twilioStatuses = map[string]string{
	"sent": "sent", "delivered": "delivered", "undelivered": "undelivered", "failed": "failed", "read": "opened",
}

// TwilioSign is Twilio's signature of a post of form to target with token.
func TwilioSign(token, target string, form url.Values) string {
	mac := hmac.New(sha1.New, []byte(token))
	mac.Write([]byte(target))
	for _, name := range slices.Sorted(maps.Keys(form)) {
		values := slices.Clone(form[name])
		slices.Sort(values)
		for _, v := range values {
			mac.Write([]byte(name))
			mac.Write([]byte(v))
		}
	}
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// twilioAuthenticate checks X-Twilio-Signature with the auth token; a post
// to an integration without one is refused.
func twilioAuthenticate(req *Request, s Secrets) error {
	if s.Token == "" {
		return ErrUnauthorized
	}
	form, err := url.ParseQuery(string(req.Body))
	if err != nil {
		return ErrUnauthorized
	}
	got, err := base64.StdEncoding.DecodeString(req.Header.Get(TwilioSignatureHeader))
	if err != nil {
		return ErrUnauthorized
	}
	want, _ := base64.StdEncoding.DecodeString(TwilioSign(s.Token, req.URL, form))
	if !hmac.Equal(got, want) {
		return ErrUnauthorized
	}
	return nil
}

func twilioParse(req *Request) (Batch, error) {
	form, err := url.ParseQuery(string(req.Body))
	if err != nil {
		return Batch{}, malformed("Twilio posts an application/x-www-form-urlencoded status callback")
	}
	status, ok := twilioStatuses[form.Get("MessageStatus")]
	sid := ref(form.Get("MessageSid"))
	if !ok || sid == "" {
		return Batch{Ignored: 1}, nil
	}
	fields := make(map[string]string, len(form))
	for k, vs := range form {
		fields[clean(k)] = clean(vs[0])
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return Batch{}, malformed("the form cannot be kept")
	}
	reason := form.Get("ErrorMessage")
	if code := form.Get("ErrorCode"); code != "" {
		reason = strings.TrimSpace("error " + code + " " + reason)
	}
	return Batch{Events: []store.DeliveryEvent{{Key: key(sid + ":" + form.Get("MessageStatus")), Status: status, ProviderMessageID: sid,
		OccurredAt: req.Now, Raw: string(raw), Detail: detail("Twilio", status, text(clean(reason)))}}}, nil
}
