package liquid

import (
	"sort"
	"strconv"
	"strings"
)

// Novu renders a step's controls as one template: the controls as JSON
// (JSON.stringify), rendered with an outputEscape that keeps the JSON valid,
// then parsed back. Herald does the same, so that every quirk of that
// pipeline is Novu's too: variables assigned in one field are seen by the
// later ones, a double-quoted string inside a tag does not parse (the
// quotes are escaped in the JSON), captured text keeps its JSON escapes.

// NovuEscape is Novu's outputEscape: objects and arrays as single-quoted
// JSON, strings escaped for a JSON string, nil as nothing.
func NovuEscape(v any) string {
	switch t := v.(type) {
	case []any, *Map, Drop:
		return NovuJSON(t, "")
	case string:
		return escapeJSONText(t)
	case nil, nullType:
		return ""
	}
	return JSString(v)
}

var jsonTextEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)

func escapeJSONText(s string) string {
	if !strings.ContainsAny(s, "\\\"\n\r\t") {
		return s
	}
	return jsonTextEscaper.Replace(s)
}

// NovuJSON is Novu's json filter: objects and arrays as JSON with single
// quotes (and the indentation's newlines escaped), nil as nothing, the rest
// as String().
func NovuJSON(v any, indent string) string {
	switch t := v.(type) {
	case []any, *Map, Drop:
		s := JSONStringify(t, indent)
		s = strings.ReplaceAll(s, `"`, `'`)
		return strings.ReplaceAll(s, "\n", `\n`)
	case nil, nullType:
		return ""
	}
	return JSString(v)
}

// NewNovu returns an engine configured as Novu configures LiquidJS.
func NewNovu() *Engine { return &Engine{Escape: NovuEscape} }

// Span is where a string value of the controls lies in their JSON text.
type Span struct {
	Begin, End int
	Path       string // dotted path of the field ("primaryAction.label")
}

// EncodeControls writes the controls as JSON.stringify does, and where
// each string value lies in the text. Go maps are written with their keys
// sorted (the order Herald keeps controls in when it has no other).
func EncodeControls(v any) (string, []Span) {
	var b strings.Builder
	var spans []Span
	encodeControl(&b, FromGo(v), "", &spans)
	return b.String(), spans
}

func encodeControl(b *strings.Builder, v any, path string, spans *[]Span) {
	switch t := v.(type) {
	case string:
		begin := b.Len()
		writeJSONString(b, t)
		*spans = append(*spans, Span{Begin: begin, End: b.Len(), Path: path})
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if IsNil(x) {
				b.WriteString("null")
				continue
			}
			encodeControl(b, x, joinPath(path, strconv.Itoa(i)), spans)
		}
		b.WriteByte(']')
	case *Map:
		b.WriteByte('{')
		n := 0
		for _, k := range t.keys {
			x := t.vals[k]
			if x == nil {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			writeJSONString(b, k)
			b.WriteByte(':')
			encodeControl(b, x, joinPath(path, k), spans)
		}
		b.WriteByte('}')
	default:
		writeJSON(b, v, "", "")
	}
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// FieldAt is the path of the field whose text holds pos ("" when none).
func FieldAt(spans []Span, pos int) string {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].End > pos })
	if i < len(spans) && spans[i].Begin <= pos {
		return spans[i].Path
	}
	return ""
}
