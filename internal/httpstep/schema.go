package httpstep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaURL names the in-memory responseBodySchema; a $ref that leaves it
// (another file, a remote URL) reaches refuseLoader and fails to compile.
const schemaURL = "mem:///responseBodySchema.json"

// refuseLoader loads nothing: schemas are compiled from the stored value
// only, never from the network or the disk. The draft meta-schemas are
// built into the library and need no loader.
type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("$ref to %s: only references inside the schema are allowed", u)
}

// compileSchema compiles a responseBodySchema as ajv does for Novu:
// draft-07 unless it names another draft in $schema, formats asserted.
// (ajv runs JavaScript regular expressions; "pattern" here is RE2, which has
// no look-around.)
func compileSchema(m map[string]any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, errors.New(brief(err.Error()))
	}
	sch, err := c.Compile(schemaURL)
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
		return nil, errors.New("it breaks the draft's meta-schema: " + describe(leaves(ve, nil)))
	}
	if err != nil {
		return nil, errors.New(brief(err.Error()))
	}
	return sch, nil
}

// schemaError is one way a response breaks the schema, as Novu lists them
// (ajv's instancePath and message).
type schemaError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// maxSchemaErrors bounds the errors listed.
const maxSchemaErrors = 10

// validateBody checks a parsed response body (as decoded by
// encoding/json) against sch and returns the errors, none when it passes.
func validateBody(sch *jsonschema.Schema, body any) []schemaError {
	err := sch.Validate(body)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []schemaError{{Message: brief(err.Error())}}
	}
	out := leaves(ve, nil)
	// The validator walks properties in map order: sort, so a detail says
	// the same for the same body.
	slices.SortStableFunc(out, func(a, b schemaError) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return out
}

var printer = message.NewPrinter(language.English)

// leaves lists the errors at the tips of ve's tree: the ones that say what
// is wrong ("got string, want number"), not that a keyword's sub-schemas
// failed ("'anyOf' failed").
func leaves(ve *jsonschema.ValidationError, out []schemaError) []schemaError {
	if len(ve.Causes) == 0 {
		return append(out, schemaError{Path: pointer(ve.InstanceLocation), Message: brief(ve.ErrorKind.LocalizedString(printer))})
	}
	for _, c := range ve.Causes {
		out = leaves(c, out)
	}
	return out
}

// pointer is a JSON pointer ("" for the root), as ajv's instancePath.
func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return sb.String()
}

// describe lists schema errors on one line: "/a: got string, want number;
// (root): missing property 'tier'".
func describe(errs []schemaError) string {
	var parts []string
	for i, e := range errs {
		if i == maxSchemaErrors {
			parts = append(parts, fmt.Sprintf("and %d more", len(errs)-i))
			break
		}
		p := e.Path
		if p == "" {
			p = "(root)"
		}
		parts = append(parts, p+": "+e.Message)
	}
	return strings.Join(parts, "; ")
}

// brief keeps an error's first line, at most 300 bytes.
func brief(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return truncate(strings.TrimSpace(s), 300)
}
