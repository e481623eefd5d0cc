// Package logctx carries the identifiers that tie Herald's log lines
// together — request id, environment, transaction, job — in a context, and
// adds them to every record logged with that context (slog's *Context
// methods). One small struct per request or job: setting a field later (the
// environment once authenticated, the transaction once parsed) needs no new
// context.
package logctx

import (
	"context"
	"log/slog"
)

// Fields are the identifiers of one request or one job. A Fields belongs
// to one goroutine at a time: the request's, or the job's.
type Fields struct {
	RequestID     string
	EnvironmentID string
	TransactionID string
	JobID         string
}

type key struct{}

// With returns ctx carrying f.
func With(ctx context.Context, f *Fields) context.Context { return context.WithValue(ctx, key{}, f) }

// From returns the fields ctx carries, or nil.
func From(ctx context.Context) *Fields {
	if ctx == nil {
		return nil
	}
	f, _ := ctx.Value(key{}).(*Fields)
	return f
}

// handler adds the context's Fields to each record.
type handler struct{ next slog.Handler }

// Handler wraps next so that records logged with a context carrying Fields
// get their non-empty fields as attributes: requestId, environmentId,
// transactionId, jobId. A handler wrapped already is returned as it is.
func Handler(next slog.Handler) slog.Handler {
	if _, ok := next.(handler); ok {
		return next
	}
	return handler{next: next}
}

// Logger returns log with its handler wrapped (see Handler); nil stays nil.
func Logger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return nil
	}
	if _, ok := log.Handler().(handler); ok {
		return log
	}
	return slog.New(Handler(log.Handler()))
}

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if f := From(ctx); f != nil {
		// r is this handler's own copy; the attributes go after the call's.
		if f.RequestID != "" {
			r.AddAttrs(slog.String("requestId", f.RequestID))
		}
		if f.EnvironmentID != "" {
			r.AddAttrs(slog.String("environmentId", f.EnvironmentID))
		}
		if f.TransactionID != "" {
			r.AddAttrs(slog.String("transactionId", f.TransactionID))
		}
		if f.JobID != "" {
			r.AddAttrs(slog.String("jobId", f.JobID))
		}
	}
	return h.next.Handle(ctx, r)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler { return handler{next: h.next.WithAttrs(as)} }

func (h handler) WithGroup(name string) slog.Handler { return handler{next: h.next.WithGroup(name)} }
