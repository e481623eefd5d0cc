package httpapi

import (
	"bytes"
	"encoding/json"
	"sort"
)

// orderedValues are a step's controls as the API answers them: an object
// whose keys come in the order they were written (store.Step.ControlOrder,
// the order rendering uses), then any others alphabetically. A client
// that saves what it read (the dashboard) so keeps the order; nested
// objects are in key order, as JSON objects from Go are.
type orderedValues struct {
	values map[string]any
	order  []string
}

func (o orderedValues) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(o.values))
	seen := make(map[string]bool, len(o.values))
	for _, k := range o.order {
		if _, ok := o.values[k]; ok && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	rest := make([]string, 0, len(o.values)-len(keys))
	for k := range o.values {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
