package jsonlogic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/nodetest"
)

// oracleDir is the Node project that evaluates rules with json-logic-js
// 2.0.5 and Novu's operations.
var oracleDir = filepath.Join("..", "..", "clients", "jsonlogic-oracle")

// diffOutEnv names a file to write every case with both results to.
const diffOutEnv = "HERALD_JSONLOGIC_DIFF_OUT"

// defaultNow is the instant of a case that names none.
const defaultNow = "2025-06-15T12:30:45.678Z"

// corpusFile is one file of testdata: cases sharing data and an instant
// unless they name their own.
type corpusFile struct {
	Data  json.RawMessage `json:"data"`
	Now   string          `json:"now"`
	Cases []struct {
		Name string          `json:"name"`
		Rule json.RawMessage `json:"rule"`
		Data json.RawMessage `json:"data"`
		Now  string          `json:"now"`
	} `json:"cases"`
}

// diffCase is one evaluation to compare, in the oracle's input form.
type diffCase struct {
	Name string          `json:"-"`
	Rule json.RawMessage `json:"rule"`
	Data json.RawMessage `json:"data"`
	Now  string          `json:"now"`
}

// outcome is a result encoded as the oracle encodes it, or an error.
type outcome struct {
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	Failed bool   `json:"failed,omitempty"`
}

func (o outcome) String() string {
	if o.Failed {
		return "error: " + o.Error
	}
	b, _ := json.Marshal(o.Result)
	return string(b)
}

// TestDifferential evaluates the corpus under testdata and generated cases
// with json-logic-js 2.0.5 and Novu's operations (clients/jsonlogic-oracle)
// and with this package, and requires the same outcome: both fail, or both
// give the same value (numbers exactly, NaN, infinities, -0 and undefined
// included).
func TestDifferential(t *testing.T) {
	cases := loadCorpus(t)
	static := len(cases)
	cases = append(cases, generateCases(generatedSeed, generatedCases)...)

	node, npm := nodetest.RequireTool(t, "node"), nodetest.RequireTool(t, "npm")
	nodetest.NpmCI(t, npm, oracleDir)
	novu := runOracle(t, node, cases)

	type record struct {
		Name   string          `json:"name"`
		Rule   json.RawMessage `json:"rule"`
		Data   json.RawMessage `json:"data"`
		Now    string          `json:"now"`
		Novu   outcome         `json:"novu"`
		Herald outcome         `json:"herald"`
	}
	var records []record
	differ := 0
	for i, c := range cases {
		h := heraldOutcome(c, i%2 == 1)
		records = append(records, record{c.Name, c.Rule, c.Data, c.Now, novu[i], h})
		if h.Failed == novu[i].Failed && (h.Failed || sameJSON(h.Result, novu[i].Result)) {
			continue
		}
		differ++
		if differ <= 40 {
			t.Errorf("%s: Herald and Novu differ\nrule:   %s\ndata:   %s\nnow:    %s\nnovu:   %s\nherald: %s",
				c.Name, c.Rule, c.Data, c.Now, novu[i], h)
		}
	}
	if path := os.Getenv(diffOutEnv); path != "" {
		b, err := json.MarshalIndent(records, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	msg := fmt.Sprintf("%d of %d cases differ (%d from the corpus, %d generated)", differ, len(cases), static, len(cases)-static)
	if differ > 0 {
		t.Error(msg)
	} else {
		t.Log(msg)
	}
}

// heraldOutcome evaluates a case, its JSON decoded with json.Number when
// useNumber is set.
func heraldOutcome(c diffCase, useNumber bool) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{Failed: true, Error: fmt.Sprintf("panic: %v", p)}
		}
	}()
	rule, data := decodeJSON(c.Rule, useNumber), decodeJSON(c.Data, useNumber)
	now, err := time.Parse(time.RFC3339Nano, c.Now)
	if err != nil {
		return outcome{Failed: true, Error: err.Error()}
	}
	r, err := Parse(rule)
	if err != nil {
		return outcome{Failed: true, Error: err.Error()}
	}
	v, err := r.eval(data, now)
	if err != nil {
		return outcome{Failed: true, Error: err.Error()}
	}
	return outcome{Result: encodeJS(v)}
}

func decodeJSON(b []byte, useNumber bool) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	if useNumber {
		dec.UseNumber()
	}
	var v any
	if err := dec.Decode(&v); err != nil {
		panic(err)
	}
	return v
}

// encodeJS encodes a value as the oracle does: what JSON cannot carry as
// {"$num": ...} and {"$undefined": true}.
func encodeJS(v any) any {
	switch x := norm(v).(type) {
	case undefinedType:
		return map[string]any{"$undefined": true}
	case float64:
		switch {
		case math.IsNaN(x):
			return map[string]any{"$num": "NaN"}
		case math.IsInf(x, 1):
			return map[string]any{"$num": "Infinity"}
		case math.IsInf(x, -1):
			return map[string]any{"$num": "-Infinity"}
		case x == 0 && math.Signbit(x):
			return map[string]any{"$num": "-0"}
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = encodeJS(el)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, el := range x {
			out[k] = encodeJS(el)
		}
		return out
	}
	return v
}

// sameJSON compares decoded JSON values, numbers exactly.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	}
	return a == b
}

// runOracle evaluates every case in one run of the oracle.
func runOracle(t *testing.T, node string, cases []diffCase) []outcome {
	t.Helper()
	stdin, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		Result json.RawMessage `json:"result"`
		Error  *string         `json:"error"`
	}
	out := runNode(t, node, stdin, "oracle.mjs")
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("%s/oracle.mjs wrote no JSON array: %v\n%.2000s", oracleDir, err, out)
	}
	if len(results) != len(cases) {
		t.Fatalf("the oracle answered %d cases of %d", len(results), len(cases))
	}
	outcomes := make([]outcome, len(cases))
	for i, r := range results {
		if r.Error != nil {
			outcomes[i] = outcome{Failed: true, Error: *r.Error}
			continue
		}
		outcomes[i] = outcome{Result: decodeJSON(r.Result, false)}
	}
	return outcomes
}

// runNode runs node in the oracle's folder with TZ=UTC.
func runNode(t *testing.T, node string, stdin []byte, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = oracleDir
	cmd.Env = append(os.Environ(), "TZ=UTC", "NO_COLOR=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%.4000s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// loadCorpus reads the cases under testdata, named "file/name".
func loadCorpus(t *testing.T) []diffCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no corpus under testdata")
	}
	sort.Strings(paths)
	var cases []diffCase
	seen := map[string]bool{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f corpusFile
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		for i, c := range f.Cases {
			name := base + "/" + c.Name
			if c.Name == "" || seen[name] {
				t.Fatalf("%s: case %d has no name or a name used before (%q)", path, i, c.Name)
			}
			seen[name] = true
			dc := diffCase{Name: name, Rule: c.Rule, Data: firstNonEmpty(c.Data, f.Data, json.RawMessage(`{}`)), Now: c.Now}
			if dc.Now == "" {
				dc.Now = f.Now
			}
			if dc.Now == "" {
				dc.Now = defaultNow
			}
			if len(dc.Rule) == 0 {
				t.Fatalf("%s: case %q has no rule", path, c.Name)
			}
			cases = append(cases, dc)
		}
	}
	return cases
}

func firstNonEmpty(ms ...json.RawMessage) json.RawMessage {
	for _, m := range ms {
		if len(m) > 0 {
			return m
		}
	}
	return nil
}
