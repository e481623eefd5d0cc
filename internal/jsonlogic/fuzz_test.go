package jsonlogic

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParseEval decodes arbitrary JSON as a rule and evaluates it over fixed
// data: Parse and Eval must never panic, and Eval must end within its budget.
func FuzzParseEval(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	var data any
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		var file corpusFile
		if err := json.Unmarshal(b, &file); err != nil {
			f.Fatal(err)
		}
		if data == nil && len(file.Data) > 0 {
			data = decodeJSON(file.Data, false)
		}
		for _, c := range file.Cases {
			f.Add([]byte(c.Rule))
		}
	}
	for _, c := range generateCases(generatedSeed, 50) {
		f.Add([]byte(c.Rule))
	}
	now := time.Date(2025, 6, 15, 12, 30, 45, 0, time.UTC)
	f.Fuzz(func(t *testing.T, b []byte) {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return
		}
		r, err := Parse(v)
		if err != nil {
			return
		}
		start := time.Now()
		_, _ = r.Eval(data, now)
		_, _ = r.Runs(data, now)
		_ = r.Vars()
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s took %v", b, d)
		}
	})
}
