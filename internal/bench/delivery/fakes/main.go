// Command fakes runs the local provider servers of the delivery benchmark
// in a process of their own: an SMTP server (the nodemailer wire fake) and
// an HTTP provider API (the SendGrid wire fake). It prints the credentials
// that point an integration at each, one JSON line, and serves what they
// received at GET /stats: deliveries, distinct subjects (each trigger of
// the benchmark has its own) and requests. -delay makes every answer wait,
// as real providers do.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"os"

	"github.com/herald-notify/herald/internal/provider/email/nodemailer/nodemailerfake"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

type counted interface {
	Received() []providertest.Delivery
	Requests() int
}

func main() {
	addr := flag.String("stats", "127.0.0.1:3998", "address of the stats endpoint")
	delay := flag.Duration("delay", 0, "how long each provider takes to answer (SendGrid and Twilio answer in 100–400 ms)")
	flag.Parse()
	smtpFake, sg := nodemailerfake.New(), sendgridfake.New()
	smtpFake.SetDelay(*delay)
	sg.SetDelay(*delay)
	smtpCreds := smtpFake.Credentials()
	// The fake's certificate is self-signed: STARTTLS without verification,
	// as an SMTP integration with tlsOptions.rejectUnauthorized=false.
	smtpCreds["tlsOptions"] = map[string]any{"rejectUnauthorized": false}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"nodemailer": smtpCreds, "sendgrid": sg.Credentials()})
	fakes := map[string]counted{"nodemailer": smtpFake, "sendgrid": sg}
	http.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		out := map[string]any{}
		for name, f := range fakes {
			got := f.Received()
			subjects := make(map[string]bool, len(got))
			for _, d := range got {
				subjects[d.Subject] = true
			}
			out[name] = map[string]int{"received": len(got), "distinct": len(subjects), "requests": f.Requests()}
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
