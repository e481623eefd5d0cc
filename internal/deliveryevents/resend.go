package deliveryevents

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// Resend's webhooks, sent through Svix: one JSON object {type, created_at,
// data} a post, signed with the endpoint's whsec_ secret: svix-signature
// holds space-separated "v1,<base64 HMAC-SHA256>" entries of
// svix-id.svix-timestamp.body.

// Svix's headers.
const (
	SvixIDHeader        = "svix-id"
	SvixTimestampHeader = "svix-timestamp"
	SvixSignatureHeader = "svix-signature"
)

// svixTolerance is how far a post's timestamp may be from Herald's clock.
const svixTolerance = 5 * time.Minute

var resendStatuses = map[string]string{
	"email.sent": "sent", "email.delivered": "delivered", "email.delivery_delayed": "deferred", "email.bounced": "bounced",
	"email.complained": "spam", "email.opened": "opened", "email.clicked": "clicked", "email.failed": "failed",
}

// resendAuthenticate checks a Svix signature with the key (whsec_…).
func resendAuthenticate(req *Request, s Secrets) error {
	if s.Key == "" {
		return nil
	}
	return svixVerify(req, s.Key)
}

// SvixSign is the svix-signature entry of a post: tests and tools sign as
// Svix does with it.
func SvixSign(secret, msgID, timestamp string, body []byte) (string, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(svixMAC(k, msgID, timestamp, body)), nil
}

func svixMAC(k []byte, msgID, timestamp string, body []byte) []byte {
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(msgID + "." + timestamp + "."))
	mac.Write(body)
	return mac.Sum(nil)
}

// svixVerify checks the Svix headers of req with secret.
func svixVerify(req *Request, secret string) error {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(strings.TrimSpace(secret), "whsec_"))
	if err != nil || len(k) == 0 {
		return ErrUnauthorized
	}
	msgID, ts := req.Header.Get(SvixIDHeader), req.Header.Get(SvixTimestampHeader)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if msgID == "" || err != nil {
		return ErrUnauthorized
	}
	if d := req.Now.Sub(time.Unix(sec, 0)); d > svixTolerance || d < -svixTolerance {
		return ErrUnauthorized
	}
	want := svixMAC(k, msgID, ts, req.Body)
	for _, entry := range strings.Fields(req.Header.Get(SvixSignatureHeader)) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrUnauthorized
}

type resendEvent struct {
	Type      text `json:"type"`
	CreatedAt text `json:"created_at"`
	Data      struct {
		EmailID text `json:"email_id"`
		Bounce  struct {
			Message text `json:"message"`
		} `json:"bounce"`
		Failed struct {
			Reason text `json:"reason"`
		} `json:"failed"`
	} `json:"data"`
}

func resendParse(req *Request) (Batch, error) {
	var ev resendEvent
	if json.Unmarshal(req.Body, &ev) != nil {
		return Batch{}, malformed("Resend posts a JSON object {type, created_at, data}")
	}
	status, ok := resendStatuses[string(ev.Type)]
	if !ok {
		return Batch{Ignored: 1}, nil
	}
	raw := rawJSON(req.Body)
	identity := req.Header.Get(SvixIDHeader)
	if identity == "" {
		identity = digest([]byte(raw))
	}
	reason := ev.Data.Bounce.Message
	if reason == "" {
		reason = ev.Data.Failed.Reason
	}
	return Batch{Events: []store.DeliveryEvent{{Key: key(identity), Status: status, ProviderMessageID: ref(string(ev.Data.EmailID)),
		OccurredAt: isoTime(ev.CreatedAt, req.Now), Raw: raw, Detail: detail("Resend", status, reason)}}}, nil
}
