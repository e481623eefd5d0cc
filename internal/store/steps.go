package store

import (
	"context"
	"time"
)

// StepResult is what an earlier step of a notification left for the later
// ones: their conditions and templates read it as steps.<stepId>.
type StepResult struct {
	// StepID is the workflow step's _id; Type and Status are its job's.
	StepID, Type, Status string
	// Output is the step's output (JSON) when it ran: an HTTP request's
	// response body, a throttle's count, a delay's duration.
	Output JSON
	// Digest is a digest step's metadata with its events.
	Digest JSON
	// Message is an in-app step's message as it is now (nil: none).
	Message *MessageState
	// CreatedAt is when the step's job was created.
	CreatedAt time.Time
}

// MessageState is an in-app message's seen and read state.
type MessageState struct {
	Seen, Read             bool
	LastSeenAt, LastReadAt *time.Time
}

// ThrottleCountParams counts one execution of a throttle step in its
// window: (environment, subscriber, workflow, step, key).
type ThrottleCountParams struct {
	Scope
	SubscriberID, WorkflowID, StepID, Key string
	// WindowEnd is when a window opened by this execution closes.
	WindowEnd time.Time
	Now       time.Time
}

// ThrottleCount is a throttle window after an execution was counted.
type ThrottleCount struct {
	Count                  int
	WindowStart, WindowEnd time.Time
}

// Steps reads and writes what steps share across a notification's run.
type Steps interface {
	// StepResults lists the results of a notification's steps before the
	// step at index before, in step order.
	StepResults(ctx context.Context, scope Scope, notificationID string, before int) ([]StepResult, error)
	// ThrottleCount counts an execution in its throttle window — the open
	// one, or a new one from Now to WindowEnd when none is open — atomically
	// under concurrency.
	ThrottleCount(ctx context.Context, p *ThrottleCountParams) (ThrottleCount, error)
}
