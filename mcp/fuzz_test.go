package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzSplitDevice feeds tool arguments as a client may send them: the
// device comes out as a string, the params as an object without it.
func FuzzSplitDevice(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"device":"sim/1","locate":"e7"}`, `{"device":7}`, `[1]`, `{"device":"a","device":"b"}`, `{"locate":{"text":"OK","index":0}}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		dev, params, err := splitDevice(raw)
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(params, &m); err != nil {
			t.Fatalf("params %q are not an object: %v", params, err)
		}
		if _, ok := m["device"]; ok {
			t.Fatalf("params %q still hold the device", params)
		}
		if dev != "" && !json.Valid(raw) {
			t.Fatalf("device %q from invalid JSON %q", dev, raw)
		}
	})
}
