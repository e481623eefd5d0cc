package liquid

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzBudget stops a fuzzed render early.
type fuzzBudget struct{ ticks, bytes int }

var errBudget = errors.New("over budget")

func (b *fuzzBudget) Tick() error {
	b.ticks++
	if b.ticks > 10_000 {
		return errBudget
	}
	return nil
}

func (b *fuzzBudget) Made(n int) error {
	b.bytes += n
	if b.bytes > 1<<20 {
		return errBudget
	}
	return nil
}

func (b *fuzzBudget) WouldMake(n int) error {
	if n > 1<<20 || n < 0 {
		return errBudget
	}
	return nil
}

// FuzzParseRender parses arbitrary templates and renders those that parse:
// neither panics, and a failure is a *Error or the budget's error.
func FuzzParseRender(f *testing.F) {
	for _, s := range []string{
		"Hi {{ subscriber.firstName | upcase }}", "{% if a and b or c %}x{% elsif d %}y{% else %}z{% endif %}",
		"{% for i in (1..5) offset: 1 limit: 2 reversed %}{{ forloop.index }}{% else %}e{% endfor %}",
		"{% case x %}{% when 'a' or 'b', 'c' %}1{% else %}2{% endcase %}", "{% raw %}{{ x }}{% endraw %}",
		"{%- capture c -%} {{ x | json: 2 }} {%- endcapture -%}{{ c }}", "{% liquid echo 'a' %}", "{{ a[b.c]['d'] }}",
		"{% tablerow i in (1..3) cols: 2 %}{% cycle 'g': 'a', 'b' %}{% endtablerow %}", "{% # note %}{% increment n %}",
	} {
		f.Add(s)
	}
	e := NewNovu()
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := e.Parse(src)
		if err != nil {
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("%q: parse error %T %v is not a *liquid.Error", src, err, err)
			}
			return
		}
		vars := NewMap(2)
		vars.Set("x", "a")
		vars.Set("a", []any{1.0, "b", NewMap(0)})
		b := &fuzzBudget{}
		_, err = e.Render(tpl, vars, RenderOptions{Budget: b, Now: time.Unix(0, 0)})
		var le *Error
		if err != nil && !errors.Is(err, errBudget) && !errors.As(err, &le) {
			t.Fatalf("%q: render error %T %v", src, err, err)
		}
	})
}

// FuzzParseJSON: the decoder of rendered controls agrees with
// encoding/json on valid JSON and never panics on the rest.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}],"c":"x\ny\u00e9"}`, `[]`, `"\ud83d\ude00"`, `{"a":"say "hi" now"}`, `1e400`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseJSON(s)
		var want any
		if !utf8.ValidString(s) || json.Unmarshal([]byte(s), &want) != nil || err != nil {
			return
		}
		if !reflect.DeepEqual(ToGo(got), want) {
			t.Fatalf("%q: got %#v, encoding/json %#v", s, ToGo(got), want)
		}
	})
}
