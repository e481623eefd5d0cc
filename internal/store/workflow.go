package store

import (
	"context"
	"time"
)

// Workflow is a notification workflow: the ordered steps a trigger runs.
type Workflow struct {
	ID             string
	OrganizationID string
	EnvironmentID  string
	Key            string // the client's workflowId, the trigger name
	Name           string
	Description    string
	Tags           []string
	Active         bool
	Critical       bool
	Severity       string
	Preferences    JSON
	PayloadSchema  JSON
	Steps          []Step
	Deleted        bool
	// Origin is OriginBridge for a workflow synced from the environment's
	// Novu Framework app (its steps run there), "" for one made through the
	// API or the dashboard.
	Origin          string
	LastTriggeredAt *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Step is one step of a workflow.
type Step struct {
	ID            string         `json:"_id"`
	StepID        string         `json:"stepId"`
	Name          string         `json:"name"`
	Type          string         `json:"type"`
	ControlValues map[string]any `json:"controlValues"`
	// ControlOrder is the order the control values' keys were sent in: a
	// step's controls render as one template in that order (an assign in
	// one field is seen by the later ones), as in Novu.
	ControlOrder []string `json:"controlOrder,omitempty"`
	// ControlSchema is the JSON schema of a synced step's controls, as its
	// bridge declares them (nil for other steps).
	ControlSchema JSON `json:"controlSchema,omitempty"`
}

// OriginBridge marks a workflow synced from a Novu Framework app.
const OriginBridge = "bridge"

// WorkflowListParams pages workflows.
type WorkflowListParams struct {
	Scope
	Offset, Limit int
	Query         string // substring of name or workflowId
	// Active, when set, lists only the active workflows.
	Active bool
}

// WorkflowDeleteParams names the workflow to delete.
type WorkflowDeleteParams struct {
	Scope
	ID  string
	Now time.Time
}

// Workflows keeps workflows.
type Workflows interface {
	// WorkflowCreate inserts; a taken Key is ErrConflict.
	WorkflowCreate(ctx context.Context, w *Workflow) error
	// WorkflowGet finds a workflow by its _id or its Key.
	WorkflowGet(ctx context.Context, scope Scope, idOrKey string) (Workflow, error)
	WorkflowList(ctx context.Context, p *WorkflowListParams) ([]Workflow, int, error)
	// WorkflowUpdate writes every field of w (found by ID and scope) but
	// CreatedAt and LastTriggeredAt; w.UpdatedAt is the time of the change:
	// the caller sets it.
	WorkflowUpdate(ctx context.Context, w *Workflow) error
	WorkflowDelete(ctx context.Context, p *WorkflowDeleteParams) error
}

// Job statuses.
const (
	JobPending   = "pending"
	JobQueued    = "queued"
	JobRunning   = "running"
	JobCompleted = "completed"
	JobFailed    = "failed"
	JobCanceled  = "canceled"
	JobSkipped   = "skipped"
	JobDelayed   = "delayed"
	JobMerged    = "merged"
)

// JobFinal reports whether a job of this status never runs again: it
// completed, failed, was skipped or canceled, or merged into a digest.
func JobFinal(status string) bool {
	switch status {
	case JobCompleted, JobFailed, JobSkipped, JobCanceled, JobMerged:
		return true
	}
	return false
}

// Notification is one recipient's run of a triggered workflow.
type Notification struct {
	ID                     string
	OrganizationID         string
	EnvironmentID          string
	WorkflowID             string
	SubscriberID           string // the subscriber's _id
	TransactionID          string
	Payload                JSON
	Overrides              JSON
	Actor                  JSON // nil when none
	To                     JSON
	Tags                   []string
	Channels               []string
	DigestedNotificationID string
	// Contexts are the trigger's contexts as resolved ({type: {id, data}};
	// nil when none) and ContextKeys their "type:id" keys, sorted and
	// joined by "," ("" when none).
	Contexts    JSON
	ContextKeys string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Job is one step of one notification: the unit of background work.
type Job struct {
	ID                      string
	OrganizationID          string
	EnvironmentID           string
	NotificationID          string
	SubscriberID            string
	WorkflowID              string
	TransactionID           string
	StepID                  string // the workflow step's _id
	StepIndex               int
	Type                    string
	ProviderID              string
	Status                  string
	RunAt                   time.Time
	LeaseUntil              *time.Time
	Attempts                int
	Digest                  JSON
	DigestKey               *string
	Error                   string
	ScheduleExtensionsCount int
	CreatedAt               time.Time
	UpdatedAt               time.Time
	// IntegrationID is the integration a delivery job uses ("" before it picks one).
	IntegrationID string
	// Delivery is a delivery job's state across its attempts (engine-owned JSON).
	Delivery JSON
}

// ExecutionDetail records one thing that happened to a job.
type ExecutionDetail struct {
	ID             string
	JobID          string
	NotificationID string
	EnvironmentID  string
	Status         string // Success, Warning, Failed, Pending, Queued, ReadConfirmation
	Source         string // Credentials, Internal, Payload, Webhook
	Detail         string
	IsRetry        bool
	IsTest         bool
	ProviderID     string
	Raw            *string
	CreatedAt      time.Time
	// WebhookStatus is the provider's status of a detail recorded from a
	// delivery event (source Webhook; "" for the others).
	WebhookStatus string
}

// Recipient is one addressee of a trigger: an existing subscriberId, or
// attributes to upsert.
type Recipient struct {
	SubscriberID string
	// Upsert, when non-nil, creates or updates the subscriber first (at the
	// trigger's Now: its own Now is ignored).
	Upsert *SubscriberUpsertParams
}

// TriggerParams is one triggered event.
type TriggerParams struct {
	Scope
	Workflow      Workflow
	TransactionID string
	Recipients    []Recipient
	Payload       JSON
	Overrides     JSON
	Actor         JSON
	Tags          []string
	// Contexts and ContextKeys are the resolved contexts of the trigger
	// (see Notification).
	Contexts    JSON
	ContextKeys string
	// ProviderFor gives the provider of a step's job by step type.
	ProviderFor func(stepType string) string
	// DigestPlans, when set, holds the placing of the workflow's first step,
	// a digest, for each recipient (same index as Recipients), planned — its
	// controls rendered — before the transaction (see engine.PlanDigests):
	// the trigger places each event into its window in its own transaction.
	// A nil plan leaves the step to a worker.
	DigestPlans []*DigestJoinParams
	// Topics fan the event out to their members, and Broadcast to every
	// subscriber of the environment, through a fan-out job written in the
	// trigger's transaction: each distinct subscriber once, those named in
	// Recipients and the actor (ActorSubscriberID) left out.
	// InApp, when set, holds the outcome of the workflow's first step, an
	// in-app step, run before the transaction for each recipient (same index
	// as Recipients; see engine.PlanInApp): its Job and Job.NotificationID
	// are the ids to write. The transaction writes the job finished with its
	// message and details, and queues the next step. A nil outcome, or one
	// planned for a subscriber that is no longer the recipient's, leaves the
	// step to a worker.
	InApp []*JobOutcome
	// Known are the recipients named by subscriberId alone that the store
	// found before the trigger's transaction (by subscriberId; nil: not
	// looked up yet). The group's planning and writing use them rather than
	// read them again; a recipient missing here is created in the
	// transaction as when not found there.
	Known map[string]Subscriber
	// KnownChoices are the channel preferences of the Known recipients for
	// the trigger's workflow, read with them (by the subscriber's _id; nil:
	// not read; no entry: no preferences).
	KnownChoices      map[string]ChannelChoices
	Topics            []TopicRecipient
	Broadcast         bool
	ActorSubscriberID string
	Now               time.Time
}

// TriggerResult says what a trigger created.
type TriggerResult struct {
	// Duplicate is true when the transactionId was used before: nothing was created.
	Duplicate     bool
	Notifications []Notification
	// FanoutJobID is the fan-out job written for Topics or Broadcast ("" when none).
	FanoutJobID string
	// Jobs counts the jobs written for the workers to run, queued or delayed
	// (not those finished with the trigger, nor those waiting on a step).
	Jobs int
	// MissingTopics are the topic keys that name no topic: their fan-out is
	// left out, the rest of the event goes on.
	MissingTopics []string
	// Finished are the first-step jobs the trigger wrote finished: in-app
	// steps run with it (InApp), digest events merged into a window or sent
	// at once (DigestPlans). Each has its final Status, and its RunAt is
	// when it became due (the trigger's Now).
	Finished []Job
}

// LeftWork reports whether the trigger wrote work for the workers (jobs to
// run, a fan-out): only then are they woken.
func (r TriggerResult) LeftWork() bool { return r.Jobs > 0 || r.FanoutJobID != "" }

// TriggerOutcome is one event's answer from TriggerMany.
type TriggerOutcome struct {
	Result TriggerResult
	Err    error
}

// TriggerCancelParams names the transaction whose jobs are canceled.
type TriggerCancelParams struct {
	Scope
	TransactionID string
	Now           time.Time
}

// Claimed is a job claimed by a worker, with what running it needs.
type Claimed struct {
	Job          Job
	Notification Notification
	Subscriber   Subscriber
	Workflow     Workflow
	// Digest is the metadata (with events) of the notification's finished
	// digest step, for the steps after it.
	Digest JSON
	// Preferences are the subscriber's channel choices for the workflow,
	// loaded for the whole batch at claim time (channel steps only).
	Preferences ChannelChoices
}

// JobOutcome is what running a claimed job produced; JobFinish writes it atomically.
type JobOutcome struct {
	Job    Job    // as claimed (ID and Attempts guard against a stale worker)
	Status string // completed, failed, queued (retry), delayed, skipped, canceled
	// RunAt is when a queued (retried) or delayed job runs next.
	RunAt time.Time
	Error string
	// Messages are written once per (job, target), whatever the status: a
	// retried chat or push job keeps the messages of the targets it reached.
	Messages []*Message
	Details  []ExecutionDetail
	// IntegrationID and Delivery, when set, are written on the job.
	IntegrationID string
	Delivery      JSON
	// Digest, when set, is written as the job's digest metadata.
	Digest JSON
	// Output, when set, is written as the step's output (StepResult.Output).
	Output JSON
	// ContinueWorkflow queues the next step of the notification.
	ContinueWorkflow bool
	// SkipRest marks the notification's later steps skipped; CancelRest
	// marks them canceled (a workflow stopped by a failed step).
	SkipRest, CancelRest bool
	// Handled says the outcome was written already (digest steps): JobFinish skips it.
	Handled bool
}

// DigestJoinParams places a claimed digest job into its digest window.
type DigestJoinParams struct {
	Job Job
	// Key is the digestKey value read from the payload ("" when none).
	Key string
	// WindowEnd is when a window opened now closes.
	WindowEnd time.Time
	// Backoff, when positive, sends the first event of a quiet period at
	// once: no digest job of this key in the Backoff before now.
	Backoff time.Duration
	// Event is this job's event (its payload) for the digest's events.
	Event JSON
	// Metadata is the digest metadata without events.
	Metadata map[string]any
	// At is when the event reached the step: it joins a window still open
	// then (membership by event time, however late a worker places it).
	At  time.Time
	Now time.Time
}

// Digest outcomes.
const (
	DigestMerged    = "merged"    // joined an open window
	DigestLeader    = "leader"    // opened a window, waits for it to close
	DigestImmediate = "immediate" // backoff: went out at once
)

// DigestJoinResult says what DigestJoinMany did with one event.
type DigestJoinResult struct {
	Outcome string
	// LeaderNotificationID is the notification whose digest this event joined.
	LeaderNotificationID string
	// Status is the digest job's status after the placing: merged, skipped
	// (immediate: the next step runs at once) or delayed (a window's leader).
	Status string
}

// Pipeline is the trigger pipeline's persistence: triggers and the jobs queue.
type Pipeline interface {
	// Trigger creates, in one transaction, the notification of each
	// recipient and one job per workflow step, the first queued.
	Trigger(ctx context.Context, p *TriggerParams) (TriggerResult, error)
	// TriggerMany is Trigger for several events: each is written as if
	// alone (one event's failure fails only that event) and the outcomes
	// come back in the order of ps.
	TriggerMany(ctx context.Context, ps []*TriggerParams) []TriggerOutcome
	// SetTriggerPlanner sets what runs, for each group of triggers about to
	// be written together, before their transaction (see
	// engine.InAppPlanner): it may fill the triggers' InApp. Set it before
	// the first trigger.
	SetTriggerPlanner(fn func(ctx context.Context, ps []*TriggerParams))
	// TriggerCancel cancels the jobs of a transaction that have not run yet
	// and reports how many.
	TriggerCancel(ctx context.Context, p *TriggerCancelParams) (int, error)
	// JobClaim leases up to limit due jobs to a worker.
	JobClaim(ctx context.Context, limit int, lease time.Duration, now time.Time) ([]Claimed, error)
	// JobFinish writes the outcomes of claimed jobs; an outcome whose job is
	// no longer leased under the same attempt is dropped and reported false.
	JobFinish(ctx context.Context, outcomes []JobOutcome, now time.Time) ([]bool, error)
	// JobRescue queues again the running jobs whose lease expired.
	JobRescue(ctx context.Context, now time.Time) (int, error)
	// JobNextRunAt is the earliest run time of a queued or delayed job (zero: none).
	JobNextRunAt(ctx context.Context) (time.Time, error)
	// Maintain keeps the queue's tables fit for their plans where the
	// database does not (statistics, dead rows); it returns what it did.
	Maintain(ctx context.Context) ([]string, error)
	// JobResumeDue completes the delayed jobs that are due (delays over,
	// digest windows closed), queues their next steps, and returns the jobs
	// it completed: ids, type, provider, status and RunAt (when each became
	// due).
	JobResumeDue(ctx context.Context, now time.Time) ([]Job, error)
	// DigestJoinMany merges each digest job of a batch into the open window
	// of its key, opens a window, or (backoff) lets it go at once — in one
	// transaction, atomically under concurrency. A job whose lease was lost
	// is left alone: its result is the zero value.
	DigestJoinMany(ctx context.Context, ps []*DigestJoinParams) ([]DigestJoinResult, error)
	Fanout
}
