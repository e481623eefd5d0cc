package sandbox

import (
	"bytes"
	"encoding/json"
)

// KeyOrder lists the top-level keys of a JSON object in the order they are
// written (nil for anything else): the order Ordered renders controls in.
func KeyOrder(obj []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return keys
}
