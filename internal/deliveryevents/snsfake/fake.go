// Package snsfake is Amazon SNS as Herald sees it, in memory: it signs
// posts as SNS signs them, with a self-signed test certificate, and is the
// transport of a deliveryevents.SNS that serves that certificate and takes
// the subscriptions' confirmations — no packet leaves the process. The
// herald binary never imports it (cmd/herald's TestBinaryHasNoTestCode
// checks).
package snsfake

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/deliveryevents"
)

// CertURL is where the fake's certificate is served.
const CertURL = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0000000000000000000000000000000a.pem"

// TopicArn is the topic the fake's posts come from, unless told otherwise.
const TopicArn = "arn:aws:sns:us-east-1:123456789012:herald-ses-events"

// signer is the key and certificate every Fake signs with, made once: an
// RSA key takes a while to generate.
var signer = sync.OnceValues(func() (*rsa.PrivateKey, []byte) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.amazonaws.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
})

// Fake signs SNS posts and answers SNS's requests from memory.
type Fake struct {
	mu        sync.Mutex
	fetches   int
	confirmed []string
	requests  []string
}

// New makes a Fake.
func New() *Fake { return &Fake{} }

// SNS is a deliveryevents.SNS whose every request the fake answers.
func (f *Fake) SNS() *deliveryevents.SNS {
	return deliveryevents.NewSNS(deliveryevents.SNSOptions{Transport: f})
}

// RoundTrip answers a request: the certificate at CertURL, a 200 to a GET
// of SNS's ConfirmSubscription (recorded), a 404 to anything else.
func (f *Fake) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL.String()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, u)
	answer := func(status int, body []byte) *http.Response {
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req}
	}
	switch {
	case req.Method == http.MethodGet && u == CertURL:
		f.fetches++
		_, cert := signer()
		return answer(http.StatusOK, cert), nil
	case req.Method == http.MethodGet && req.URL.Query().Get("Action") == "ConfirmSubscription":
		f.confirmed = append(f.confirmed, u)
		return answer(http.StatusOK, []byte("<ConfirmSubscriptionResponse/>")), nil
	}
	return answer(http.StatusNotFound, nil), nil
}

// Fetches counts the certificate's fetches.
func (f *Fake) Fetches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetches
}

// Confirmed are the SubscribeURLs confirmed, in order.
func (f *Fake) Confirmed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.confirmed...)
}

// Requests are every URL requested, in order.
func (f *Fake) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// Sign signs m with the fake's key (m.SignatureVersion, "2" when empty;
// m.SigningCertURL, CertURL when empty).
func Sign(m *deliveryevents.SNSMessage) {
	if m.SignatureVersion == "" {
		m.SignatureVersion = "2"
	}
	if m.SigningCertURL == "" {
		m.SigningCertURL = CertURL
	}
	key, _ := signer()
	if err := deliveryevents.SNSSign(m, key); err != nil {
		panic(err)
	}
}

// Body is m as SNS posts it.
func Body(m *deliveryevents.SNSMessage) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// Notification is a signed Notification of message (an SES event's JSON)
// from topic, with id as its MessageId, published at.
func Notification(topic, id, message string, at time.Time) *deliveryevents.SNSMessage {
	m := &deliveryevents.SNSMessage{Type: deliveryevents.SNSNotification, MessageID: id, TopicArn: topic, Message: message,
		Timestamp:      at.UTC().Format("2006-01-02T15:04:05.000Z"),
		UnsubscribeURL: "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=" + topic + ":sub"}
	Sign(m)
	return m
}

// SubscriptionConfirmation is a signed SubscriptionConfirmation of topic
// with token, sent at.
func SubscriptionConfirmation(topic, token string, at time.Time) *deliveryevents.SNSMessage {
	m := &deliveryevents.SNSMessage{Type: deliveryevents.SNSSubscriptionConfirmation, MessageID: "confirm-" + token, Token: token,
		TopicArn: topic, Timestamp: at.UTC().Format("2006-01-02T15:04:05.000Z"),
		Message: fmt.Sprintf("You have chosen to subscribe to the topic %s.\nTo confirm the subscription, visit the SubscribeURL"+
			" included in this message.", topic),
		SubscribeURL: "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=" + strings.ReplaceAll(topic, ":", "%3A") +
			"&Token=" + token}
	Sign(m)
	return m
}
