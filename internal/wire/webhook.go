package wire

import "github.com/herald-notify/herald/internal/store"

// WebhookMessage is a message as the outbound webhooks' message events carry
// it (Novu's MessageWebhookResponseDto): the message after the change,
// subscriberId being the subscriber's own id.
type WebhookMessage struct {
	ID                 string  `json:"_id"`
	TemplateID         string  `json:"_templateId"`
	EnvironmentID      string  `json:"_environmentId"`
	OrganizationID     string  `json:"_organizationId"`
	NotificationID     string  `json:"_notificationId"`
	SubscriberID       string  `json:"subscriberId"`
	TemplateIdentifier string  `json:"templateIdentifier"`
	WorkflowID         string  `json:"workflowId"`
	TransactionID      string  `json:"transactionId"`
	Channel            string  `json:"channel"`
	Seen               bool    `json:"seen"`
	Read               bool    `json:"read"`
	Archived           bool    `json:"archived"`
	ArchivedAt         *string `json:"archivedAt,omitempty"`
	SnoozedUntil       *string `json:"snoozedUntil,omitempty"`
	delivery
	ProviderID string `json:"providerId"`
	Status     string `json:"status"`
	ErrorText  string `json:"errorText,omitempty"`
	CreatedAt  string `json:"createdAt"`
	UpdatedAt  string `json:"updatedAt"`
}

// WebhookMessageOf is m, a message of the subscriber whose own id is
// subscriberID, as a webhook event carries it.
func WebhookMessageOf(m *store.Message, subscriberID string) WebhookMessage {
	return WebhookMessage{ID: m.ID, TemplateID: m.WorkflowID, EnvironmentID: m.EnvironmentID, OrganizationID: m.OrganizationID,
		NotificationID: m.NotificationID, SubscriberID: subscriberID, TemplateIdentifier: m.TemplateIdentifier,
		WorkflowID: m.TemplateIdentifier, TransactionID: m.TransactionID, Channel: m.Channel, Seen: m.Seen, Read: m.Read,
		Archived: m.Archived, ArchivedAt: TimePtr(m.ArchivedAt), SnoozedUntil: TimePtr(m.SnoozedUntil), delivery: deliveryOf(m),
		ProviderID: m.ProviderID, Status: m.Status, ErrorText: m.ErrorText, CreatedAt: Time(m.CreatedAt), UpdatedAt: Time(m.UpdatedAt)}
}
