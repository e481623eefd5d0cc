package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/liquid"
	"github.com/herald-notify/herald/internal/nodetest"
	"github.com/herald-notify/herald/internal/sandbox"
)

// renderHerald renders controls with Herald's sandbox as a step does.
//
// It is the only place where the differential test calls Herald: controls
// and context are the JSON documents the oracle gets (controls in the order
// of their keys), and the result must marshal to the JSON of the rendered
// controls.
func renderHerald(controls, context []byte) (any, error) {
	c, err := liquid.ParseJSON(string(controls))
	if err != nil {
		return nil, err
	}
	ctx, err := liquid.ParseJSON(string(context))
	if err != nil {
		return nil, err
	}
	m, _ := ctx.(*liquid.Map)
	vars := map[string]any{}
	if m != nil {
		for _, k := range m.Keys() {
			vars[k], _ = m.Get(k)
		}
	}
	out, err := differentialSandbox.Controls(c, vars)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// differentialSandbox renders every case with the default limits.
var differentialSandbox = sandbox.New(sandbox.DefaultLimits)

// oracleDir is the Node project that renders controls with Novu's engine.
var oracleDir = filepath.Join("..", "..", "clients", "liquid-oracle")

// corpusGlob names the static cases: one file per class of template.
const corpusGlob = "testdata/liquid/*.json"

// diffOutEnv names a file to write every case with both results to.
const diffOutEnv = "HERALD_LIQUID_DIFF_OUT"

// generatedSeed and generatedCases fix the generated cases.
const (
	generatedSeed  = 20261126
	generatedCases = 192
)

// defaultSubscriber is the subscriber of a case that names none.
const defaultSubscriber = `{"subscriberId":"sub-1","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com"}`

// corpusCase is one case of a corpus file: a template (the controls
// {"body": template}) or controls of several fields, with the payload and
// subscriber of the render. The JSON documents are kept as written (key
// order, number literals).
type corpusCase struct {
	Name       string          `json:"name"`
	Template   *string         `json:"template"`
	Controls   json.RawMessage `json:"controls"`
	Payload    json.RawMessage `json:"payload"`
	Subscriber json.RawMessage `json:"subscriber"`
}

// diffCase is one render to compare.
type diffCase struct {
	File     string          `json:"file"` // the corpus file, or "generated"
	Name     string          `json:"name"`
	Source   string          `json:"source"` // the template, or the controls' JSON
	Controls json.RawMessage `json:"controls"`
	Context  json.RawMessage `json:"context"`
}

// outcome is one engine's result of a case.
type outcome struct {
	OK     bool   `json:"ok"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

func (o outcome) String() string {
	if !o.OK {
		return "error: " + o.Error
	}
	b, err := marshal(o.Result)
	if err != nil {
		return fmt.Sprintf("%#v (%v)", o.Result, err)
	}
	return string(b)
}

// TestLiquidDifferential renders a corpus of step controls — realistic
// notification templates and edge cases, static and generated — with Novu's
// engine (LiquidJS in @novu/framework, clients/liquid-oracle) and with
// Herald's, and requires the same outcome: both fail, or both succeed with
// the same rendered controls, strings byte for byte.
func TestLiquidDifferential(t *testing.T) {
	cases := loadCorpus(t)
	static := len(cases)
	cases = append(cases, generateCases(t)...)
	t.Logf("%d static cases, %d generated", static, len(cases)-static)

	node, npm := nodetest.RequireTool(t, "node"), nodetest.RequireTool(t, "npm")
	nodetest.NpmCI(t, npm, oracleDir)
	novu := runOracle(t, node, cases)

	type record struct {
		diffCase
		Novu   outcome `json:"novu"`
		Herald outcome `json:"herald"`
		Same   bool    `json:"same"`
	}
	records := make([]record, len(cases))
	differ := map[string]int{}
	total := map[string]int{}
	n := 0
	for i, c := range cases {
		h := heraldOutcome(c)
		same := novu[i].OK == h.OK && (!h.OK || reflect.DeepEqual(novu[i].Result, h.Result))
		records[i] = record{diffCase: c, Novu: novu[i], Herald: h, Same: same}
		total[c.File]++
		if same {
			continue
		}
		n++
		differ[c.File]++
		t.Errorf("%s: Herald and Novu differ\nsource:  %s\ncontext: %s\nnovu:    %s\nherald:  %s",
			c.Name, c.Source, c.Context, novu[i], h)
	}

	if path := os.Getenv(diffOutEnv); path != "" {
		b, err := marshal(records)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote the %d cases with both results to %s", len(records), path)
	}

	files := make([]string, 0, len(total))
	for f := range total {
		files = append(files, f)
	}
	sort.Strings(files)
	var summary strings.Builder
	fmt.Fprintf(&summary, "%d of %d cases differ", n, len(cases))
	for _, f := range files {
		fmt.Fprintf(&summary, "\n  %-16s %3d of %3d differ", f, differ[f], total[f])
	}
	if n > 0 {
		t.Error(summary.String())
	} else {
		t.Log(summary.String())
	}
}

// heraldOutcome renders a case with Herald, its result decoded as the
// oracle's is (through JSON); a panic is an outcome too.
func heraldOutcome(c diffCase) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{Error: fmt.Sprintf("panic: %v", p)}
		}
	}()
	res, err := renderHerald(c.Controls, c.Context)
	if err != nil {
		return outcome{Error: err.Error()}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return outcome{Error: "the result does not marshal to JSON: " + err.Error()}
	}
	v, err := decode(b)
	if err != nil {
		return outcome{Error: "the result's JSON does not decode: " + err.Error()}
	}
	return outcome{OK: true, Result: v}
}

// decode decodes a rendered result, Novu's or Herald's.
func decode(b []byte) (any, error) {
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}

// marshal writes JSON without escaping <, > and &, for people to read.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// runOracle renders every case with Novu's engine in one run of
// clients/liquid-oracle/oracle.mjs.
func runOracle(t *testing.T, node string, cases []diffCase) []outcome {
	t.Helper()
	type input struct {
		Name     string          `json:"name"`
		Controls json.RawMessage `json:"controls"`
		Context  json.RawMessage `json:"context"`
	}
	in := make([]input, len(cases))
	for i, c := range cases {
		in[i] = input{Name: c.Name, Controls: c.Controls, Context: c.Context}
	}
	stdin, err := marshal(in)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "oracle.mjs")
	cmd.Dir = oracleDir
	cmd.Env = append(os.Environ(), "TZ=UTC", "NO_COLOR=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s/oracle.mjs: %v\n%s", oracleDir, err, stderr.Bytes())
	}

	var results []struct {
		Name   string          `json:"name"`
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		t.Fatalf("%s/oracle.mjs wrote no JSON array: %v\n%.2000s\n%s", oracleDir, err, stdout.Bytes(), stderr.Bytes())
	}
	if len(results) != len(cases) {
		t.Fatalf("%s/oracle.mjs answered %d cases of %d", oracleDir, len(results), len(cases))
	}
	out := make([]outcome, len(cases))
	for i, r := range results {
		if r.Name != cases[i].Name {
			t.Fatalf("the oracle's result %d is %q, not %q", i, r.Name, cases[i].Name)
		}
		if !r.OK {
			out[i] = outcome{Error: r.Error}
			continue
		}
		v, err := decode(r.Result)
		if err != nil {
			t.Fatalf("%s: the oracle's result does not decode: %v", r.Name, err)
		}
		out[i] = outcome{OK: true, Result: v}
	}
	return out
}

// loadCorpus reads the static cases, named "file/name".
func loadCorpus(t *testing.T) []diffCase {
	t.Helper()
	paths, err := filepath.Glob(corpusGlob)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no corpus under %s", corpusGlob)
	}
	var cases []diffCase
	seen := map[string]bool{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var file []corpusCase
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&file); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		for i, cc := range file {
			name := base + "/" + cc.Name
			switch {
			case cc.Name == "":
				t.Fatalf("%s: case %d has no name", path, i)
			case seen[name]:
				t.Fatalf("%s: two cases are named %q", path, cc.Name)
			case (cc.Template == nil) == (cc.Controls == nil):
				t.Fatalf("%s: case %q needs a template or controls (not both)", path, cc.Name)
			}
			seen[name] = true
			c := diffCase{File: base, Name: name}
			if cc.Template != nil {
				c.Source = *cc.Template
				c.Controls, err = marshal(map[string]string{"body": *cc.Template})
				if err != nil {
					t.Fatal(err)
				}
			} else {
				c.Source = string(cc.Controls)
				c.Controls = cc.Controls
			}
			c.Context = caseContext(cc.Payload, cc.Subscriber)
			if !json.Valid(c.Controls) || !json.Valid(c.Context) {
				t.Fatalf("%s: case %q: invalid JSON", path, cc.Name)
			}
			cases = append(cases, c)
		}
	}
	return cases
}

// caseContext is the context of a render as Novu builds it for a step, the
// payload and subscriber as written.
func caseContext(payload, subscriber json.RawMessage) json.RawMessage {
	if len(payload) == 0 {
		payload = json.RawMessage(`{}`)
	}
	if len(subscriber) == 0 {
		subscriber = json.RawMessage(defaultSubscriber)
	}
	var b bytes.Buffer
	b.WriteString(`{"payload":`)
	b.Write(payload)
	b.WriteString(`,"subscriber":`)
	b.Write(subscriber)
	b.WriteString(`,"steps":{},"workflow":{"workflowId":"wf","name":"Workflow"}}`)
	return b.Bytes()
}

// Generated cases: random payloads through template shapes.

// obj is a JSON object that keeps the order of its keys.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(f.k)
		if err != nil {
			return nil, err
		}
		v, err := marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// lit is a JSON number written as is: 1e21, -0, 1E-7.
type lit string

func (l lit) MarshalJSON() ([]byte, error) { return []byte(l), nil }

// gen draws the random parts of payloads.
type gen struct{ r *rand.Rand }

func (g gen) pick(s ...string) string { return s[g.r.Intn(len(s))] }

// number draws a JSON number: small and huge integers, decimals, tiny
// numbers, negatives, literals that print differently than written.
func (g gen) number() lit {
	switch g.r.Intn(12) {
	case 0:
		return lit(strconv.Itoa(g.r.Intn(100)))
	case 1:
		return lit(strconv.Itoa(g.r.Intn(2_000_000) - 1_000_000))
	case 2:
		return lit(strconv.FormatInt(g.r.Int63(), 10)) // up to 9.2e18: beyond 2^53
	case 3:
		return lit(g.pick("1e21", "1000000000000000000000", "123456789012345678901", "1E21", "9007199254740993", "-1e21", "1.5e300"))
	case 4:
		return lit(strconv.FormatFloat(g.r.Float64()*1000, 'f', g.r.Intn(4)+1, 64))
	case 5:
		return lit(strconv.FormatFloat(-g.r.Float64()*100, 'f', g.r.Intn(3)+1, 64))
	case 6:
		return lit(g.pick("1e-7", "0.0000001", "2.5e-8", "-3e-7", "0.000001", "1e-6", "5E-324"))
	case 7:
		return lit(g.pick("0.1", "0.2", "0.30000000000000004", "1.005", "2.675", "-2.5", "2.5", "-0", "0", "0.0", "1.0", "10.50"))
	case 8:
		return lit(strconv.FormatFloat(g.r.NormFloat64()*1e6, 'g', -1, 64))
	case 9:
		return lit(strconv.Itoa(g.r.Intn(10) - 5))
	case 10:
		return lit(strconv.FormatFloat(float64(g.r.Intn(100000))/100, 'f', -1, 64))
	default:
		return lit(strconv.FormatInt(int64(g.r.Intn(1_000_000_000))*1000+int64(g.r.Intn(1000)), 10))
	}
}

var words = []string{
	"Ada", "order", "Straße", "ß", "naïve café", "ÉCOLE", "日本語", "北京", "😀", "👩‍💻", "🇩🇪", "Ünïcödé",
	"", " ", "  padded  ", "x\"y", "it's", "back\\slash", "tab\there", "line\nbreak", "<b>bold</b>", "a & b",
	"100%", "null", "true", "0", "42", "-1.5", "1e3", "ǅ", "İstanbul", "ﬀ", "Ωmega", "\u00a0nbsp",
}

// str draws a string of one to three words.
func (g gen) str() string {
	n := g.r.Intn(3) + 1
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[g.r.Intn(len(words))]
	}
	return strings.Join(parts, g.pick(" ", "", "-", ", "))
}

// scalar draws a number, string, boolean or null.
func (g gen) scalar() any {
	switch g.r.Intn(10) {
	case 0, 1, 2, 3:
		return g.number()
	case 4, 5, 6:
		return g.str()
	case 7:
		return g.r.Intn(2) == 0
	case 8:
		return nil
	default:
		return g.pick("yes", "no", "")
	}
}

// value draws any JSON value, nested at most depth deep.
func (g gen) value(depth int) any {
	if depth <= 0 {
		return g.scalar()
	}
	switch g.r.Intn(6) {
	case 0:
		a := make([]any, g.r.Intn(4))
		for i := range a {
			a[i] = g.value(depth - 1)
		}
		return a
	case 1:
		o := obj{}
		for i, n := 0, g.r.Intn(4); i < n; i++ {
			o = append(o, kv{g.pick("a", "b", "name", "z", "1", "Ключ", "k y", "id"), g.value(depth - 1)})
		}
		return dedupe(o)
	default:
		return g.scalar()
	}
}

// dedupe keeps the first of each key (JSON objects with duplicate keys
// decode differently in JavaScript and Go).
func dedupe(o obj) obj {
	seen := map[string]bool{}
	out := obj{}
	for _, f := range o {
		if !seen[f.k] {
			seen[f.k] = true
			out = append(out, f)
		}
	}
	return out
}

// timestamp draws a date: Unix seconds or milliseconds, as numbers or
// strings, ISO 8601 with Z, an offset or no zone, date only, or junk.
func (g gen) timestamp() any {
	sec := int64(g.r.Intn(2_000_000_000))
	t := time.Unix(sec, int64(g.r.Intn(1000))*int64(time.Millisecond)).UTC()
	switch g.r.Intn(9) {
	case 0:
		return lit(strconv.FormatInt(sec, 10))
	case 1:
		return lit(strconv.FormatInt(t.UnixMilli(), 10))
	case 2:
		return strconv.FormatInt(sec, 10)
	case 3:
		return strconv.FormatInt(t.UnixMilli(), 10)
	case 4:
		return t.Format("2006-01-02T15:04:05Z")
	case 5:
		return t.Format("2006-01-02T15:04:05.000Z")
	case 6:
		return t.In(time.FixedZone("", (g.r.Intn(27)-12)*1800)).Format("2006-01-02T15:04:05-07:00")
	case 7:
		return t.Format(g.pick("2006-01-02", "2006-01-02T15:04:05", "2006-01-02 15:04:05"))
	default:
		return g.pick("not a date", "", "2026-13-45", "yesterday")
	}
}

// payload draws the payload every shape reads: n and m are numbers, s and t
// strings, nums, strs and mixed arrays, items objects, o a nested object,
// ts a date.
func (g gen) payload() obj {
	nums := make([]any, g.r.Intn(5))
	for i := range nums {
		nums[i] = g.number()
	}
	strs := make([]any, g.r.Intn(5))
	for i := range strs {
		strs[i] = g.str()
	}
	mixed := make([]any, g.r.Intn(5))
	for i := range mixed {
		mixed[i] = g.value(1)
	}
	items := make([]any, g.r.Intn(4))
	for i := range items {
		items[i] = obj{
			{"name", g.str()},
			{"price", g.number()},
			{"qty", lit(strconv.Itoa(g.r.Intn(4)))},
			{"tags", []any{g.pick("new", "sale", "gift"), g.str()}},
			{"active", g.r.Intn(2) == 0},
		}
	}
	o := obj{{"id", g.number()}, {"label", g.str()}, {"nested", g.value(2)}, {"list", g.value(1)}}
	return obj{
		{"n", g.number()}, {"m", g.number()}, {"s", g.str()}, {"t", g.str()},
		{"nums", nums}, {"strs", strs}, {"mixed", mixed}, {"items", items},
		{"o", o}, {"flag", g.scalar()}, {"nil", nil}, {"ts", g.timestamp()}, {"any", g.value(2)},
	}
}

// shapes are the templates the generated payloads go through.
var shapes = []string{
	"{{ payload.n }}",
	"{{ payload.m }} / {{ payload.s }}",
	"Total: {{ payload.n | plus: payload.m }}",
	"{{ payload.n | minus: payload.m }}",
	"{{ payload.n | times: payload.m }}",
	"{{ payload.n | times: 100 | round }}",
	"{{ payload.n | divided_by: 4 }}",
	"{{ payload.n | divided_by: 3.0 | round: 2 }}",
	"{{ payload.n | modulo: 7 }}",
	"{{ payload.n | abs }} {{ payload.n | ceil }} {{ payload.n | floor }}",
	"{{ payload.n | round: 2 }}",
	"{{ payload.n | at_least: 0 | at_most: 100 }}",
	"{{ payload.nums | join: ', ' }}",
	"{{ payload.nums | sort | join: ' ' }}",
	"{{ payload.nums | sum }}",
	"{{ payload.nums | first }}-{{ payload.nums | last }}",
	"{{ payload.nums }}",
	"{{ payload.strs | join: ' / ' }}",
	"{{ payload.strs | sort | first }}",
	"{{ payload.strs | sort_natural | join: '|' }}",
	"{{ payload.strs | uniq | size }}",
	"{{ payload.items | map: 'name' | join: ', ' }}",
	"{{ payload.items | map: 'price' | sum }}",
	"{{ payload.items | where: 'active' | size }}",
	"{{ payload.items | sort: 'price' | map: 'price' | join: ',' }}",
	"{% for i in payload.items %}{{ forloop.index }}. {{ i.name }} x{{ i.qty }} = {{ i.price | times: i.qty }}\n{% endfor %}",
	"{% for x in payload.strs %}{{ x | upcase }}{% unless forloop.last %}, {% endunless %}{% else %}none{% endfor %}",
	"{% for x in payload.mixed %}[{{ x }}]{% endfor %}",
	"{% for x in payload.nums reversed limit: 2 %}{{ x }};{% endfor %}",
	"{% if payload.n > payload.m %}more{% elsif payload.n == payload.m %}same{% else %}less{% endif %}",
	"{% if payload.flag %}yes{% else %}no{% endif %}",
	"{% if payload.s == empty %}empty{% elsif payload.s == blank %}blank{% else %}{{ payload.s }}{% endif %}",
	"{% if payload.s contains 'a' or payload.n > 0 and payload.flag %}T{% else %}F{% endif %}",
	"{% if payload.strs contains payload.s %}in{% else %}out{% endif %}",
	"{{ payload.o }}",
	"{{ payload.o | json }}",
	"{{ payload.o.nested }}",
	"{{ payload.any }}",
	"{{ payload.mixed | json }}",
	"{{ payload.items }}",
	"{{ payload.s | size }} {{ payload.strs | size }} {{ payload.o | size }}",
	"{{ payload.s | upcase }}|{{ payload.s | downcase }}|{{ payload.s | capitalize }}",
	"{{ payload.s | truncate: 8 }}",
	"{{ payload.s | escape }}",
	"{{ payload.s | url_encode }}",
	"{{ payload.s | replace: 'a', 'A' | append: payload.t }}",
	"{{ payload.s | split: ' ' | reverse | join: ' ' }}",
	"{{ payload.ts | date: '%Y-%m-%d %H:%M:%S' }}",
	"{{ payload.ts | date: '%a, %d %b %Y %H:%M %Z' }}",
	"{{ payload.ts | date }}",
	"{{ payload.ts | date_to_xmlschema }}",
	"{{ payload.flag | default: 'none' }} {{ payload.nil | default: payload.s }}",
	"{% assign total = 0 %}{% for i in payload.items %}{% assign total = total | plus: i.price %}{% endfor %}{{ total }}",
	"{% case payload.s %}{% when '' %}empty{% when 'Ada', 'ß' %}known{% else %}other:{{ payload.s }}{% endcase %}",
	"{{ payload.any | size }}|{{ payload.any | first }}",
	"{% capture c %}{{ payload.s }}/{{ payload.n }}{% endcapture %}{{ c | strip }}",
	"{{ payload.nums | map: 'x' | compact | size }}",
	"{{ payload.n | append: '' | size }}",
	"{{ payload.n | json }} {{ payload.s | json }}",
	"{{ payload.s | slice: 1, 3 }}",
	"{{ payload.nil }}{{ payload.missing }}|{{ payload.nil | size }}",
	"{{ payload.strs | digest: 2 }}",
	"{{ payload.strs | toSentence }}",
	"{{ payload.nums | size | pluralize: 'item' }}",
}

// generateCases draws the generated cases: every shape in turn, each with a
// fresh random payload, from a fixed seed.
func generateCases(t *testing.T) []diffCase {
	t.Helper()
	g := gen{r: rand.New(rand.NewSource(generatedSeed))}
	cases := make([]diffCase, generatedCases)
	for i := range cases {
		shape := shapes[i%len(shapes)]
		controls, err := marshal(map[string]string{"body": shape})
		if err != nil {
			t.Fatal(err)
		}
		p, err := marshal(g.payload())
		if err != nil {
			t.Fatal(err)
		}
		cases[i] = diffCase{
			File:     "generated",
			Name:     fmt.Sprintf("generated/%03d", i),
			Source:   shape,
			Controls: controls,
			Context:  caseContext(p, nil),
		}
	}
	return cases
}
