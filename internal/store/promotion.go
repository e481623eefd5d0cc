package store

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"
)

// Promotion: environments created and deleted through the API, and the
// promotion of an environment's resources (workflows, …) into another
// environment of its organization — what differs, and publishing it.

// Resource kinds that promote between environments. Each has a promoter in
// the store implementation (sqlstore/promote.go); ResourceKinds lists them
// in the order they are compared and published.
const (
	ResourceLayout   = "layout"
	ResourceWorkflow = "workflow"
)

// ResourceKinds are the kinds of resource a publish promotes. Layouts come
// before the workflows whose e-mail steps name them.
var ResourceKinds = []string{ResourceLayout, ResourceWorkflow}

// Kinds of ResourcePart.
const (
	// PartStep is a workflow's step (Key its stepId).
	PartStep = "step"
	// PartTranslations is a workflow's or a layout's translations, every
	// locale's content (Key "translations"); it comes after the steps.
	// Translations promote with their resource, as Novu's diff shows them:
	// a "localization_group" change of the workflow or layout.
	PartTranslations = "localization_group"
)

// Promote actions.
const (
	PromoteCreated = "created"
	PromoteUpdated = "updated"
	PromoteDeleted = "deleted"
)

// Resource is one promotable resource of an environment as it compares
// across environments: Key names it in every environment of the
// organization (a workflow's workflowId), Content holds, as canonical JSON,
// everything a publish copies but its Parts (a workflow's steps, in order).
type Resource struct {
	Kind      string
	Key       string
	ID        string // the record's id in its environment
	Name      string
	UpdatedAt time.Time
	Content   JSON
	Parts     []ResourcePart
}

// ResourcePart is an ordered part of a resource (a workflow's step, the
// translations of a workflow or a layout).
type ResourcePart struct {
	Kind    string // PartStep, PartTranslations
	Key     string // the step's stepId; "translations"
	Name    string
	Type    string
	Content JSON
}

// Same reports whether two resources hold the same content: publishing one
// over the other would change nothing.
func (r Resource) Same(o Resource) bool {
	if !bytes.Equal(r.Content, o.Content) || len(r.Parts) != len(o.Parts) {
		return false
	}
	for i := range r.Parts {
		a, b := r.Parts[i], o.Parts[i]
		if a.Key != b.Key || a.Kind != b.Kind || a.Name != b.Name || a.Type != b.Type || !bytes.Equal(a.Content, b.Content) {
			return false
		}
	}
	return true
}

// ResourceRef names a resource of some kind by its Key.
type ResourceRef struct {
	Kind string
	Key  string
}

// PublishParams promotes the resources of Source that differ into Target:
// created where Target lacks them, updated where they differ, deleted from
// Target where Source lacks them. Only, when non-empty, limits the publish
// to those resources.
type PublishParams struct {
	Source Scope
	Target Scope
	Only   []ResourceRef
	Now    time.Time
}

// Published is one resource a publish changed in the target.
type Published struct {
	ResourceRef
	Name   string
	Action string // PromoteCreated, PromoteUpdated, PromoteDeleted
	// TargetID is the record's id in the target.
	TargetID string
}

// EnvironmentCreateParams creates an environment with its first API key
// and integrations, atomically. A name taken in the organization is
// ErrConflict.
type EnvironmentCreateParams struct {
	Environment  Environment
	APIKeys      []APIKey
	Integrations []Integration
}

// EnvironmentDeleteParams deletes an environment of an organization: its
// keys are revoked, its integrations removed, and it is no longer found.
type EnvironmentDeleteParams struct {
	OrganizationID string
	ID             string
	Now            time.Time
}

// Promotion creates and deletes environments and promotes resources
// between the environments of an organization.
type Promotion interface {
	EnvironmentCreate(ctx context.Context, p *EnvironmentCreateParams) error
	EnvironmentDelete(ctx context.Context, p *EnvironmentDeleteParams) error
	// EnvironmentResources returns every promotable resource of an
	// environment, by kind (in ResourceKinds order) then Key.
	EnvironmentResources(ctx context.Context, scope Scope) ([]Resource, error)
	// EnvironmentPublish applies, in one transaction, what differs between
	// source and target; publishing again changes nothing. It returns what
	// it changed, in EnvironmentResources order.
	EnvironmentPublish(ctx context.Context, p *PublishParams) ([]Published, error)
	// WorkflowTags returns the distinct non-empty tags of an environment's
	// workflows, sorted.
	WorkflowTags(ctx context.Context, scope Scope) ([]string, error)
}

// PairResources matches two environments' resources by kind and key, in
// ResourceKinds order then by key: [source, target], nil where absent.
func PairResources(src, dst []Resource) [][2]*Resource {
	rank := map[string]int{}
	for i, k := range ResourceKinds {
		rank[k] = i
	}
	byRef := map[ResourceRef]*[2]*Resource{}
	var refs []ResourceRef
	for side, list := range [][]Resource{src, dst} {
		for i := range list {
			ref := ResourceRef{Kind: list[i].Kind, Key: list[i].Key}
			pair, ok := byRef[ref]
			if !ok {
				pair = &[2]*Resource{}
				byRef[ref] = pair
				refs = append(refs, ref)
			}
			pair[side] = &list[i]
		}
	}
	slices.SortFunc(refs, func(a, b ResourceRef) int {
		return cmp.Or(cmp.Compare(rank[a.Kind], rank[b.Kind]), cmp.Compare(a.Key, b.Key))
	})
	out := make([][2]*Resource, len(refs))
	for i, ref := range refs {
		out[i] = *byRef[ref]
	}
	return out
}
