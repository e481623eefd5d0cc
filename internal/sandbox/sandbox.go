// Package sandbox renders the Liquid templates that workflow authors write —
// untrusted code — under budgets: wall time, loop iterations and filter
// calls, the size of every value a filter takes or makes, the work all
// filters and captures do, and the size of the output. Panics are recovered
// and become errors. Templates are parsed with the osteele/liquid parser,
// but the tags are Herald's own (no include, no file access, bounded loops
// and captures) and every filter runs behind a budget check.
package sandbox

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/osteele/liquid/parser"
	lrender "github.com/osteele/liquid/render"

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
	parse  lrender.Config

	mu          sync.RWMutex
	cache       map[string]lrender.Node
	cachedBytes int

	pool sync.Pool // *renderConfig
}

// maxCachedBytes bounds the template sources kept parsed.
const maxCachedBytes = 64 << 20

// New builds a Sandbox with the limits (zero fields take DefaultLimits).
func New(l Limits) *Sandbox {
	s := &Sandbox{limits: l.withDefaults(), cache: map[string]lrender.Node{}}
	s.parse = newConfig(nil)
	return s
}

// Check parses a template, reporting a syntax error or a template too long.
func (s *Sandbox) Check(src string) error {
	_, err := s.compile(src)
	return err
}

// compile returns the parsed template, from the cache when it was parsed before.
func (s *Sandbox) compile(src string) (node lrender.Node, err error) {
	if len(src) > s.limits.MaxSource {
		return nil, newError(ReasonSource, "the template is longer than %d bytes", s.limits.MaxSource)
	}
	s.mu.RLock()
	node, ok := s.cache[src]
	s.mu.RUnlock()
	if ok {
		return node, nil
	}
	defer func() {
		if p := recover(); p != nil {
			node, err = nil, newError(ReasonSyntax, "the template could not be parsed: %v", p)
		}
	}()
	node, perr := s.parse.Compile(src, parser.SourceLoc{})
	if perr != nil {
		return nil, newError(ReasonSyntax, "%s", strings.TrimPrefix(perr.Error(), "Liquid error: "))
	}
	s.mu.Lock()
	if s.cachedBytes+len(src) > maxCachedBytes {
		s.cache, s.cachedBytes = map[string]lrender.Node{}, 0
	}
	s.cache[src] = node
	s.cachedBytes += len(src)
	s.mu.Unlock()
	return node, nil
}

// Run is one render under one budget: the templates of one step. It is not
// safe for concurrent use; End returns its resources.
type Run struct {
	s   *Sandbox
	cfg *renderConfig
}

// Begin starts a render; its time budget starts now. The calling goroutine
// stays on its OS thread until End, so that the thread's CPU clock measures
// the render.
func (s *Sandbox) Begin() *Run {
	cfg, _ := s.pool.Get().(*renderConfig)
	if cfg == nil {
		cfg = newRenderConfig()
	}
	threadClock{}.lock()
	cfg.b.reset(&s.limits, time.Now())
	return &Run{s: s, cfg: cfg}
}

// End releases the run. The run must not be used afterwards.
func (r *Run) End() {
	if r.cfg != nil {
		r.s.pool.Put(r.cfg)
		r.cfg = nil
		threadClock{}.unlock()
	}
}

// Render renders one template with the variables (which it does not change).
func (r *Run) Render(src string, vars map[string]any) (string, error) {
	if src == "" {
		return "", nil
	}
	b := r.cfg.b
	if b.err != nil {
		return "", b.err
	}
	node, err := r.s.compile(src)
	if err != nil {
		return "", err
	}
	scope := make(map[string]any, len(vars)+1)
	for k, v := range vars {
		scope[k] = v
	}
	scope[budgetKey] = b
	w := &limitWriter{b: b, max: min(b.l.MaxOutput, b.l.MaxTotal-b.total), reason: ReasonOutput}
	if err := r.render(node, w, scope); err != nil {
		return "", err
	}
	out := string(w.buf)
	if textcheck.Text(out) != nil {
		// url_decode can make NUL bytes and invalid UTF-8, which no store
		// holds alike (PostgreSQL refuses them): the step fails instead.
		return "", newError(ReasonText, "the rendered text is not valid UTF-8 or holds a NUL character")
	}
	b.total += len(out)
	return out, nil
}

// render renders under panic recovery; a budget failure wins over whatever
// error or panic it caused on its way out.
func (r *Run) render(node lrender.Node, w *limitWriter, scope map[string]any) (err error) {
	b := r.cfg.b
	defer func() {
		if p := recover(); p != nil {
			if b.err != nil {
				err = b.err
				return
			}
			err = newError(ReasonPanic, "the template failed: %v", p)
		}
	}()
	rerr := lrender.Render(node, w, scope, r.cfg.cfg)
	if b.err != nil {
		return b.err
	}
	if rerr != nil {
		var se *Error
		if errors.As(rerr.Cause(), &se) {
			return se
		}
		return newError(ReasonRender, "%s", strings.TrimPrefix(rerr.Error(), "Liquid error: "))
	}
	return nil
}

// Value renders every string in v — through objects and arrays — and
// returns a copy. Errors name the field (dotted path) of the template.
func (r *Run) Value(v any, vars map[string]any) (any, error) {
	return r.value("", v, vars)
}

func (r *Run) value(path string, v any, vars map[string]any) (any, error) {
	switch t := v.(type) {
	case string:
		out, err := r.Render(t, vars)
		if err != nil {
			var se *Error
			if errors.As(err, &se) && se.Field == "" && path != "" {
				c := *se
				c.Field = path
				return nil, &c
			}
			return nil, err
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			rx, err := r.value(join(path, k), x, vars)
			if err != nil {
				return nil, err
			}
			out[k] = rx
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			rx, err := r.value(join(path, fmt.Sprint(i)), x, vars)
			if err != nil {
				return nil, err
			}
			out[i] = rx
		}
		return out, nil
	}
	return v, nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// Controls renders a step's control values under one budget.
func (s *Sandbox) Controls(values map[string]any, vars map[string]any) (map[string]any, error) {
	r := s.Begin()
	defer r.End()
	out, err := r.Value(values, vars)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	return m, nil
}

// Render renders one template under a budget of its own.
func (s *Sandbox) Render(src string, vars map[string]any) (string, error) {
	r := s.Begin()
	defer r.End()
	return r.Render(src, vars)
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
