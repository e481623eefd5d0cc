// Package sandbox renders the Liquid templates that workflow authors write —
// untrusted code — under budgets: CPU time, loop iterations and filter
// calls, the size of every value a filter makes, the work all filters and
// captures do, and the size of the output. Panics are recovered and become
// errors.
//
// A step's controls render as Novu renders them (internal/liquid): the
// controls as one JSON document, rendered as one template with Novu's
// output escape, parsed back. The engine has no file access (include,
// render and layout do not parse).
package sandbox

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/liquid"
	"github.com/herald-notify/herald/internal/textcheck"
)

// Limits bound one render: all the templates of one workflow step, rendered
// together (Begin … End).
type Limits struct {
	// Timeout is the CPU time of a render (default 100 ms), which may take
	// at most WallFactor times as much wall time; wall time alone where the
	// OS has no per-thread CPU clock.
	Timeout time.Duration
	// MaxIterations bounds loop iterations plus filter calls (default 100,000).
	MaxIterations int
	// MaxOutput is the size in bytes of one rendered template (default 256 KiB).
	MaxOutput int
	// MaxTotal is the size in bytes of all the templates of a render together:
	// the largest message content Herald stores (default 1 MiB).
	MaxTotal int
	// MaxValue is the size in bytes of any value a filter makes or a capture
	// holds (default 1 MiB).
	MaxValue int
	// MaxWork is the bytes all filters and captures of a render may make
	// together (default 32 MiB): it stops exponential doubling early.
	MaxWork int
	// MaxSource is the size in bytes of one template's source (default 256 KiB).
	MaxSource int
}

// DefaultLimits are the limits used where none are configured.
var DefaultLimits = Limits{
	Timeout: 100 * time.Millisecond, MaxIterations: 100_000, MaxOutput: 256 << 10, MaxTotal: 1 << 20,
	MaxValue: 1 << 20, MaxWork: 32 << 20, MaxSource: 256 << 10,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxIterations <= 0 {
		l.MaxIterations = d.MaxIterations
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = d.MaxOutput
	}
	if l.MaxTotal <= 0 {
		l.MaxTotal = max(d.MaxTotal, l.MaxOutput)
	}
	if l.MaxValue <= 0 {
		l.MaxValue = d.MaxValue
	}
	if l.MaxWork <= 0 {
		l.MaxWork = max(d.MaxWork, 4*l.MaxValue)
	}
	if l.MaxSource <= 0 {
		l.MaxSource = d.MaxSource
	}
	return l
}

// Reasons an Error gives.
const (
	ReasonSyntax     = "syntax"     // the template does not parse
	ReasonSource     = "source"     // the template is too long
	ReasonTimeout    = "timeout"    // the render ran past its time budget
	ReasonIterations = "iterations" // too many loop iterations and filter calls
	ReasonOutput     = "output"     // a rendered template or the whole render is too long
	ReasonValue      = "value"      // a filter made (or would make) a value too large
	ReasonWork       = "work"       // filters and captures made too many bytes in all
	ReasonPanic      = "panic"      // a filter or tag panicked
	ReasonRender     = "render"     // a Liquid error: bad filter arguments, undefined filter, …
	ReasonURL        = "url"        // a link is not an http(s) URL or a relative path
	ReasonText       = "text"       // the output is not valid UTF-8 or holds a NUL
)

// Error is why a template could not be rendered.
type Error struct {
	Reason string
	// Field is the control the template belongs to ("subject",
	// "primaryAction.redirect.url"), when known.
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Msg
	}
	return e.Msg
}

// maxMessage bounds the text of an error: Liquid errors quote the source.
const maxMessage = 300

func newError(reason, format string, a ...any) *Error {
	msg := fmt.Sprintf(format, a...)
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return &Error{Reason: reason, Msg: msg}
}

// Sandbox parses and renders templates. It is safe for concurrent use.
type Sandbox struct {
	limits Limits
	eng    *liquid.Engine

	mu          sync.RWMutex
	cache       map[string]*liquid.Template
	cachedBytes int

	pool sync.Pool // *budget
}

// maxCachedBytes bounds the template sources kept parsed.
const maxCachedBytes = 64 << 20

// New builds a Sandbox with the limits (zero fields take DefaultLimits).
func New(l Limits) *Sandbox {
	return &Sandbox{limits: l.withDefaults(), eng: liquid.NewNovu(), cache: map[string]*liquid.Template{}}
}

// Check parses one template as a control of a step, reporting a syntax
// error or a template too long.
func (s *Sandbox) Check(src string) error {
	if len(src) > s.limits.MaxSource {
		return newError(ReasonSource, "the template is longer than %d bytes", s.limits.MaxSource)
	}
	doc, spans := liquid.EncodeControls(src)
	_, err := s.compile(doc, spans)
	return err
}

// compile returns the parsed document, from the cache when it was parsed
// before.
func (s *Sandbox) compile(doc string, spans []liquid.Span) (tpl *liquid.Template, err error) {
	s.mu.RLock()
	tpl, ok := s.cache[doc]
	s.mu.RUnlock()
	if ok {
		return tpl, nil
	}
	defer func() {
		if p := recover(); p != nil {
			tpl, err = nil, newError(ReasonSyntax, "the template could not be parsed: %v", p)
		}
	}()
	tpl, perr := s.eng.Parse(doc)
	if perr != nil {
		e := liquidError(ReasonSyntax, perr, spans)
		var le *liquid.Error
		if errors.As(perr, &le) && le.Pos >= 0 {
			if f := openedIn(doc, spans, le.Pos); f != "" {
				e.Field = f
			}
		}
		return nil, e
	}
	s.mu.Lock()
	if s.cachedBytes+len(doc) > maxCachedBytes {
		s.cache, s.cachedBytes = map[string]*liquid.Template{}, 0
	}
	s.cache[doc] = tpl
	s.cachedBytes += len(doc)
	s.mu.Unlock()
	return tpl, nil
}

// openedIn is the control whose output or tag ({{ or {%) is still open
// at pos, the place of a syntax error: the controls are one document, so
// a tag one control leaves open runs into the next, and the error is that
// control's, not the next one's where the parser noticed it. "" when no
// control before pos leaves one open.
func openedIn(doc string, spans []liquid.Span, pos int) string {
	for i := len(spans) - 1; i >= 0; i-- {
		sp := spans[i]
		if sp.Begin > pos || sp.Begin < 0 || sp.End > len(doc) {
			continue
		}
		text := doc[sp.Begin:min(sp.End, pos)]
		opened := max(strings.LastIndex(text, "{{"), strings.LastIndex(text, "{%"))
		if opened < 0 {
			continue
		}
		if max(strings.LastIndex(text, "}}"), strings.LastIndex(text, "%}")) < opened {
			return sp.Path
		}
		return ""
	}
	return ""
}

// liquidError names the field an engine error happened in and, for a
// double-quoted string in a tag, says what to write instead.
func liquidError(reason string, err error, spans []liquid.Span) *Error {
	var le *liquid.Error
	if !errors.As(err, &le) {
		return newError(reason, "%v", err)
	}
	e := newError(reason, "%s", le.Msg)
	if le.Pos >= 0 {
		e.Field = liquid.FieldAt(spans, le.Pos)
	}
	if reason == ReasonSyntax && strings.Contains(le.Msg, `\"`) {
		e.Msg += ` (write string literals in single quotes: a step's controls render as one JSON document, as in Novu, where double quotes inside a tag are escaped)`
	}
	return e
}

// Controls renders a step's control values under one budget, as Novu
// renders them: values may be Go maps (keys in sorted order) or
// liquid.Map (keys in their own order); vars' values too.
func (s *Sandbox) Controls(values any, vars map[string]any) (map[string]any, error) {
	out, err := s.render(values, vars)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// Render renders one template under a budget of its own.
func (s *Sandbox) Render(src string, vars map[string]any) (string, error) {
	out, err := s.render(src, vars)
	if err != nil {
		return "", err
	}
	str, ok := out.(string)
	if !ok {
		return "", newError(ReasonRender, "the template did not render to text")
	}
	return str, nil
}

func (s *Sandbox) render(values any, vars map[string]any) (out any, err error) {
	doc, spans := liquid.EncodeControls(values)
	for _, sp := range spans {
		if sp.End-sp.Begin > s.limits.MaxSource+2 {
			e := newError(ReasonSource, "the template is longer than %d bytes", s.limits.MaxSource)
			e.Field = sp.Path
			return nil, e
		}
	}
	tpl, err := s.compile(doc, spans)
	if err != nil {
		return nil, err
	}
	b, _ := s.pool.Get().(*budget)
	if b == nil {
		b = &budget{}
	}
	defer s.pool.Put(b)
	threadClock{}.lock()
	defer threadClock{}.unlock()
	b.reset(&s.limits, time.Now())

	env := liquid.NewMap(len(vars))
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env.Set(k, liquid.FromGo(vars[k]))
	}
	// The document's JSON around the templates (keys, quotes, numbers) is
	// not rendered text; the rest of the output is.
	maxDoc := s.limits.MaxTotal + len(doc)
	for _, sp := range spans {
		maxDoc -= sp.End - sp.Begin - 2
	}
	rendered, err := s.run(tpl, env, b, maxDoc, spans)
	if err != nil {
		return nil, err
	}
	parsed, perr := liquid.ParseJSON(rendered)
	if perr != nil {
		return nil, newError(ReasonRender, "%v", perr)
	}
	out = liquid.ToGo(parsed)
	if err := s.checkOutput("", out); err != nil {
		return nil, err
	}
	return out, nil
}

// run renders under panic recovery; a budget failure wins over whatever
// error or panic it caused on its way out.
func (s *Sandbox) run(tpl *liquid.Template, env *liquid.Map, b *budget, maxDoc int, spans []liquid.Span) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			if b.err != nil {
				err = b.err
				return
			}
			err = newError(ReasonPanic, "the template failed: %v", p)
		}
	}()
	out, rerr := s.eng.Render(tpl, env, liquid.RenderOptions{Budget: b, MaxOutput: maxDoc, Output: func(int) error { return b.check() }})
	var oe *liquid.OverflowError
	if errors.As(rerr, &oe) {
		b.fail(newError(ReasonOutput, "the rendered text is longer than %d bytes", s.limits.MaxTotal))
	}
	var pe *liquid.PosError
	field := ""
	if errors.As(rerr, &pe) {
		field = liquid.FieldAt(spans, pe.Pos)
	}
	withField := func(e *Error) *Error {
		if e.Field != "" || field == "" {
			return e
		}
		c := *e
		c.Field = field
		return &c
	}
	if b.err != nil {
		return "", withField(b.err)
	}
	if rerr != nil {
		var se *Error
		if errors.As(rerr, &se) {
			return "", withField(se)
		}
		return "", withField(liquidError(ReasonRender, rerr, spans))
	}
	return out, nil
}

// checkOutput bounds each rendered text and refuses text no store holds
// alike (url_decode can make NUL bytes and invalid UTF-8).
func (s *Sandbox) checkOutput(path string, v any) error {
	switch t := v.(type) {
	case string:
		if len(t) > s.limits.MaxOutput {
			e := newError(ReasonOutput, "the rendered text is longer than %d bytes", s.limits.MaxOutput)
			e.Field = path
			return e
		}
		if textcheck.Text(t) != nil {
			e := newError(ReasonText, "the rendered text is not valid UTF-8 or holds a NUL character")
			e.Field = path
			return e
		}
	case map[string]any:
		for k, x := range t {
			if err := s.checkOutput(join(path, k), x); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range t {
			if err := s.checkOutput(join(path, fmt.Sprint(i)), x); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// CheckAll parses every string in v (through objects and arrays) and
// returns an error for each template that does not parse, named by its
// dotted path and sorted by it.
func (s *Sandbox) CheckAll(v any) []*Error {
	var errs []*Error
	s.checkAll("", v, &errs)
	sort.Slice(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}

func (s *Sandbox) checkAll(path string, v any, errs *[]*Error) {
	switch t := v.(type) {
	case string:
		if err := s.Check(t); err != nil {
			se := *err.(*Error)
			se.Field = path
			*errs = append(*errs, &se)
		}
	case map[string]any:
		for k, x := range t {
			s.checkAll(join(path, k), x, errs)
		}
	case []any:
		for i, x := range t {
			s.checkAll(join(path, fmt.Sprint(i)), x, errs)
		}
	}
}

// Ordered gives a step's control values with their top-level keys in the
// order they were sent (the rest after, sorted), the order Novu renders
// them in.
func Ordered(values map[string]any, order []string) any {
	if len(order) == 0 {
		return values
	}
	m := liquid.NewMap(len(values))
	for _, k := range order {
		if v, ok := values[k]; ok {
			m.Set(k, liquid.FromGo(v))
		}
	}
	rest := make([]string, 0, len(values))
	for k := range values {
		if _, ok := m.Get(k); !ok {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		m.Set(k, liquid.FromGo(values[k]))
	}
	return m
}
