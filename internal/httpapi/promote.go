package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// POST /v2/environments/{targetEnvironmentId}/diff and …/publish, PUT
// /v2/workflows/{workflowId}/sync: promoting resources (store.ResourceKinds)
// from one environment of an organization into another. The source is the
// caller's environment unless sourceEnvironmentId names another; an API key
// promotes only from its own environment, into any other environment of its
// organization (Herald's keys are the organization's credentials: without
// that, nothing could reach production); a dashboard session from any.

// promotion is a source and a target environment the caller may promote between.
type promotion struct {
	source, target store.Scope
}

// readPromotion resolves the target of the path and the source of the body.
func (s *Server) readPromotion(r *http.Request, target string, o *object) (promotion, error) {
	c := callerFrom(r.Context())
	if !id.Valid(target) {
		return promotion{}, errorf(http.StatusBadRequest, "Invalid environment ID format")
	}
	p := promotion{source: c.Scope}
	if o != nil {
		if f := o.str("sourceEnvironmentId", 24); f.Value != nil {
			if !id.Valid(*f.Value) {
				return p, invalid("sourceEnvironmentId", "must be a 24-character hex identifier", *f.Value)
			}
			src, err := s.orgEnvironment(r, *f.Value, false)
			if err != nil {
				return p, err
			}
			if !c.Session && src.ID != c.EnvironmentID {
				return p, errorf(http.StatusForbidden, "An API key may promote only from its own environment")
			}
			p.source = store.Scope{OrganizationID: src.OrganizationID, EnvironmentID: src.ID}
		}
		if err := o.errs.err(); err != nil {
			return p, err
		}
	}
	env, err := s.orgEnvironment(r, target, false)
	if err != nil {
		return p, err
	}
	p.target = store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	if p.target == p.source {
		return p, errorf(http.StatusBadRequest, "Source and target environments cannot be the same")
	}
	return p, nil
}

// pending pairs the resources of source and target that differ, by kind
// then key: [source, target], nil where absent.
func (s *Server) pending(r *http.Request, p promotion) ([][2]*store.Resource, error) {
	src, err := s.store.EnvironmentResources(r.Context(), p.source)
	if err != nil {
		return nil, err
	}
	dst, err := s.store.EnvironmentResources(r.Context(), p.target)
	if err != nil {
		return nil, err
	}
	out := store.PairResources(src, dst)
	out = slices.DeleteFunc(out, func(p [2]*store.Resource) bool { return p[0] != nil && p[1] != nil && p[0].Same(*p[1]) })
	return out, nil
}

func either(p [2]*store.Resource) *store.Resource {
	if p[0] != nil {
		return p[0]
	}
	return p[1]
}

type resourceRefJSON struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	UpdatedAt *string `json:"updatedAt,omitempty"`
}

func resourceRefOut(r *store.Resource) *resourceRefJSON {
	if r == nil {
		return nil
	}
	at := formatTime(r.UpdatedAt)
	return &resourceRefJSON{ID: r.Key, Name: r.Name, UpdatedAt: &at}
}

type diffsJSON struct {
	Previous any `json:"previous"`
	New      any `json:"new"`
}

type changeJSON struct {
	ResourceType   string           `json:"resourceType"`
	Action         string           `json:"action"`
	SourceResource *resourceRefJSON `json:"sourceResource"`
	TargetResource *resourceRefJSON `json:"targetResource"`
	Diffs          *diffsJSON       `json:"diffs,omitempty"`
	StepType       string           `json:"stepType,omitempty"`
	PreviousIndex  *int             `json:"previousIndex,omitempty"`
	NewIndex       *int             `json:"newIndex,omitempty"`
}

type diffSummaryJSON struct {
	Added     int `json:"added"`
	Modified  int `json:"modified"`
	Deleted   int `json:"deleted"`
	Unchanged int `json:"unchanged"`
}

type resourceDiffJSON struct {
	ResourceType   string           `json:"resourceType"`
	SourceResource *resourceRefJSON `json:"sourceResource"`
	TargetResource *resourceRefJSON `json:"targetResource"`
	Changes        []changeJSON     `json:"changes"`
	Summary        diffSummaryJSON  `json:"summary"`
}

func decodedJSON(raw store.JSON) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

func partRef(p *store.ResourcePart) *resourceRefJSON {
	if p == nil {
		return nil
	}
	return &resourceRefJSON{ID: p.Key, Name: p.Name}
}

// translationsPart splits a resource's translations part from its other
// parts (nil when it has none).
func translationsPart(parts []store.ResourcePart) (*store.ResourcePart, []store.ResourcePart) {
	for i := range parts {
		if parts[i].Kind == store.PartTranslations {
			tr := parts[i]
			return &tr, slices.Delete(slices.Clone(parts), i, i+1)
		}
	}
	return nil, parts
}

// resourceDiff describes what publishing src over dst would change: the
// resource itself, then each of its parts (a workflow's steps, then its
// translations as one "localization_group" change: every locale's content).
func resourceDiff(src, dst *store.Resource) resourceDiffJSON {
	r := either([2]*store.Resource{src, dst})
	out := resourceDiffJSON{ResourceType: r.Kind, SourceResource: resourceRefOut(src), TargetResource: resourceRefOut(dst),
		Changes: []changeJSON{}}
	add := func(c changeJSON) {
		switch c.Action {
		case "added":
			out.Summary.Added++
		case "deleted":
			out.Summary.Deleted++
		case "unchanged":
			out.Summary.Unchanged++
			return
		default:
			out.Summary.Modified++
		}
		out.Changes = append(out.Changes, c)
	}
	switch {
	case dst == nil:
		add(changeJSON{ResourceType: r.Kind, Action: "added", SourceResource: out.SourceResource})
	case src == nil:
		add(changeJSON{ResourceType: r.Kind, Action: "deleted", TargetResource: out.TargetResource})
	default:
		if string(src.Content) != string(dst.Content) {
			add(changeJSON{ResourceType: r.Kind, Action: "modified", SourceResource: out.SourceResource,
				TargetResource: out.TargetResource, Diffs: &diffsJSON{Previous: decodedJSON(dst.Content), New: decodedJSON(src.Content)}})
		}
	}
	var srcParts, dstParts []store.ResourcePart
	if src != nil {
		srcParts = src.Parts
	}
	if dst != nil {
		dstParts = dst.Parts
	}
	srcTr, srcParts := translationsPart(srcParts)
	dstTr, dstParts := translationsPart(dstParts)
	at := map[string]int{}
	for i, p := range dstParts {
		at[p.Key] = i
	}
	for i := range srcParts {
		sp := &srcParts[i]
		newIndex := i
		j, ok := at[sp.Key]
		if !ok {
			add(changeJSON{ResourceType: sp.Kind, Action: "added", SourceResource: partRef(sp), StepType: sp.Type, NewIndex: &newIndex})
			continue
		}
		delete(at, sp.Key)
		dp := &dstParts[j]
		previous := j
		c := changeJSON{ResourceType: sp.Kind, SourceResource: partRef(sp), TargetResource: partRef(dp), StepType: sp.Type,
			PreviousIndex: &previous, NewIndex: &newIndex}
		switch {
		case string(sp.Content) != string(dp.Content) || sp.Name != dp.Name || sp.Type != dp.Type:
			c.Action = "modified"
			c.Diffs = &diffsJSON{Previous: map[string]any{"name": dp.Name, "type": dp.Type, "controls": decodedJSON(dp.Content)},
				New: map[string]any{"name": sp.Name, "type": sp.Type, "controls": decodedJSON(sp.Content)}}
		case i != j:
			c.Action = "moved"
		default:
			c.Action = "unchanged"
		}
		add(c)
	}
	for i := range dstParts {
		if _, ok := at[dstParts[i].Key]; ok {
			previous := i
			add(changeJSON{ResourceType: dstParts[i].Kind, Action: "deleted", TargetResource: partRef(&dstParts[i]),
				StepType: dstParts[i].Type, PreviousIndex: &previous})
		}
	}
	// The translations: one localization_group change, without indices.
	switch {
	case srcTr != nil && dstTr == nil:
		add(changeJSON{ResourceType: srcTr.Kind, Action: "added", SourceResource: partRef(srcTr)})
	case srcTr == nil && dstTr != nil:
		add(changeJSON{ResourceType: dstTr.Kind, Action: "deleted", TargetResource: partRef(dstTr)})
	case srcTr != nil && string(srcTr.Content) != string(dstTr.Content):
		add(changeJSON{ResourceType: srcTr.Kind, Action: "modified", SourceResource: partRef(srcTr), TargetResource: partRef(dstTr),
			Diffs: &diffsJSON{Previous: decodedJSON(dstTr.Content), New: decodedJSON(srcTr.Content)}})
	}
	return out
}

// environmentDiff serves POST /v2/environments/{targetEnvironmentId}/diff:
// the resources whose publishing would change the target.
func (s *Server) environmentDiff(w http.ResponseWriter, r *http.Request) error {
	o, err := readOptionalObject(r)
	if err != nil {
		return err
	}
	p, err := s.readPromotion(r, r.PathValue("targetEnvironmentId"), o)
	if err != nil {
		return err
	}
	pairs, err := s.pending(r, p)
	if err != nil {
		return err
	}
	resources := make([]resourceDiffJSON, 0, len(pairs))
	changes := 0
	for _, pair := range pairs {
		d := resourceDiff(pair[0], pair[1])
		changes += d.Summary.Added + d.Summary.Modified + d.Summary.Deleted
		resources = append(resources, d)
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"sourceEnvironmentId": p.source.EnvironmentID,
		"targetEnvironmentId": p.target.EnvironmentID, "resources": resources,
		"summary": map[string]any{"totalEntities": len(resources), "totalChanges": changes, "hasChanges": len(resources) > 0}})
	return nil
}

// readOptionalObject reads a JSON object body that may be absent (nil).
func readOptionalObject(r *http.Request) (*object, error) {
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	if len(body) == 0 {
		return nil, nil
	}
	return readObject(r)
}

type publishedJSON struct {
	ResourceType string `json:"resourceType"`
	ResourceID   string `json:"resourceId"`
	ResourceName string `json:"resourceName"`
	Action       string `json:"action,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

type publishResultJSON struct {
	ResourceType   string          `json:"resourceType"`
	Successful     []publishedJSON `json:"successful"`
	Failed         []publishedJSON `json:"failed"`
	Skipped        []publishedJSON `json:"skipped"`
	TotalProcessed int             `json:"totalProcessed"`
}

// readPublishResources reads resources: [{resourceType, resourceId}]; a
// resourceId is the resource's key (a workflowId) or its _id in the source.
func readPublishResources(o *object, src []store.Resource) []store.ResourceRef {
	raw, ok := o.raw["resources"]
	if !ok || isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		o.fail("resources", "must be an array of {resourceType, resourceId}", raw)
		return nil
	}
	if len(items) > 1000 {
		o.fail("resources", "must have at most 1000 items", nil)
		return nil
	}
	var out []store.ResourceRef
	for i, it := range items {
		so, err := parseObject(it)
		if err != nil {
			o.fail("resources."+strconv.Itoa(i), "must be an object", it)
			continue
		}
		so.prefix, so.errs = "resources."+strconv.Itoa(i)+".", o.errs
		ref := store.ResourceRef{Kind: so.requiredOneOf("resourceType", store.ResourceKinds...), Key: so.requiredText("resourceId", maxString)}
		for _, r := range src {
			if r.Kind == ref.Kind && r.ID == ref.Key {
				ref.Key = r.Key
			}
		}
		out = append(out, ref)
	}
	return out
}

// environmentPublish serves POST /v2/environments/{targetEnvironmentId}/publish:
// every differing resource (or those named) written into the target in one
// transaction; a dry run writes nothing and lists each as skipped.
func (s *Server) environmentPublish(w http.ResponseWriter, r *http.Request) error {
	o, err := readOptionalObject(r)
	if err != nil {
		return err
	}
	p, err := s.readPromotion(r, r.PathValue("targetEnvironmentId"), o)
	if err != nil {
		return err
	}
	src, err := s.store.EnvironmentResources(r.Context(), p.source)
	if err != nil {
		return err
	}
	var only []store.ResourceRef
	dryRun := false
	if o != nil {
		only = readPublishResources(o, src)
		if b := o.boolean("dryRun"); b != nil {
			dryRun = *b
		}
		if err := o.errs.err(); err != nil {
			return err
		}
	}
	byKind := map[string]*publishResultJSON{}
	var results []*publishResultJSON
	result := func(kind string) *publishResultJSON {
		if res, ok := byKind[kind]; ok {
			return res
		}
		res := &publishResultJSON{ResourceType: kind, Successful: []publishedJSON{}, Failed: []publishedJSON{}, Skipped: []publishedJSON{}}
		byKind[kind] = res
		results = append(results, res)
		return res
	}
	summary := map[string]int{"resources": 0, "successful": 0, "failed": 0, "skipped": 0}
	if dryRun {
		pairs, err := s.pending(r, p)
		if err != nil {
			return err
		}
		for _, pair := range pairs {
			res := either(pair)
			if len(only) > 0 && !slices.Contains(only, store.ResourceRef{Kind: res.Kind, Key: res.Key}) {
				continue
			}
			out := result(res.Kind)
			out.Skipped = append(out.Skipped, publishedJSON{ResourceType: res.Kind, ResourceID: res.Key, ResourceName: res.Name,
				Reason: "Dry run: nothing was published"})
			out.TotalProcessed++
			summary["skipped"]++
		}
	} else {
		done, err := s.store.EnvironmentPublish(s.watchPublished(r, p.source, p.target).Context(), &store.PublishParams{
			Source: p.source, Target: p.target, Only: only, Now: s.now()})
		if err != nil {
			return publishError(err)
		}
		for _, d := range done {
			out := result(d.Kind)
			out.Successful = append(out.Successful, publishedJSON{ResourceType: d.Kind, ResourceID: d.Key, ResourceName: d.Name,
				Action: d.Action})
			out.TotalProcessed++
			summary["successful"]++
		}
	}
	summary["resources"] = summary["successful"] + summary["skipped"]
	if results == nil {
		results = []*publishResultJSON{}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"results": results, "summary": summary})
	return nil
}

// publishError: a concurrent publish that wrote the same resource first
// makes this one's transaction fail whole; it may be sent again.
func publishError(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "Another publish into this environment ran at the same time: nothing was published; try again")
	}
	return err
}

// workflowSync serves PUT /v2/workflows/{workflowId}/sync: the workflow
// published alone into targetEnvironmentId, answered as it is there.
func (s *Server) workflowSync(w http.ResponseWriter, r *http.Request) error {
	wf, err := s.pathWorkflow(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	target := o.requiredText("targetEnvironmentId", 24)
	if target != "" && !id.Valid(target) {
		o.fail("targetEnvironmentId", "must be a 24-character hex identifier", o.raw["targetEnvironmentId"])
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	if target == callerFrom(r.Context()).EnvironmentID {
		return errorf(http.StatusBadRequest, "Cannot sync workflow to the same environment")
	}
	p, err := s.readPromotion(r, target, nil)
	if err != nil {
		return err
	}
	if _, err := s.store.EnvironmentPublish(s.watchPublished(r, p.source, p.target).Context(), &store.PublishParams{
		Source: p.source, Target: p.target, Only: []store.ResourceRef{{Kind: store.ResourceWorkflow, Key: wf.Key}},
		Now: s.now()}); err != nil {
		return publishError(err)
	}
	copied, err := s.store.WorkflowGet(r.Context(), p.target, wf.Key)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, workflowOut(copied))
	return nil
}
