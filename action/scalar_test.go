package action_test

import (
	"encoding/json"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
)

// A bare value stands for the action's first locator, or its one required
// param (Midscene's `Launch: com.apex.shop`).
func TestScalarParams(t *testing.T) {
	space := action.ForPlatform(device.Android)
	tests := []struct {
		action, raw, want string // want "" : refused
	}{
		{"Tap", `"Settings"`, `{"locate":"Settings"}`},
		{"Launch", `"com.apex.shop"`, `{"app":"com.apex.shop"}`},
		{"terminate", `"com.apex.shop"`, `{"app":"com.apex.shop"}`},
		{"Sleep", `250`, `{"ms":250}`},
		{"Input", `"hello"`, ""}, // the field to type into, but no value: refused
		{"Back", `"now"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.action+" "+tt.raw, func(t *testing.T) {
			c, err := space.DecodeCall(tt.action, json.RawMessage(tt.raw))
			if tt.want == "" {
				if err == nil {
					t.Fatalf("DecodeCall(%s, %s) = %s, want an error", tt.action, tt.raw, c.ParamsJSON())
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeCall(%s, %s): %v", tt.action, tt.raw, err)
			}
			if got := string(c.ParamsJSON()); got != tt.want {
				t.Errorf("DecodeCall(%s, %s) params = %s, want %s", tt.action, tt.raw, got, tt.want)
			}
		})
	}
}
