package agent

import (
	"encoding/json"
	"errors"
	"github.com/apexagent/apex/check"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
)

// A step's JSON is what the planner prompt shows: the call as action and
// params, a check-only step as "check" (or no action at all), and it reads
// back as the same step.
func TestStepJSON(t *testing.T) {
	space := action.ForPlatform(device.Android)
	from, to := action.Locator{Prompt: "Recipe 1"}, action.Locator{ID: "e9"}
	exist := &check.Check{Kind: check.Exists, Target: check.ParseTarget("Saved")}
	tests := []struct {
		name string
		step Step
		json string
	}{
		{"drag", Step{ID: 1, Call: action.DragAndDrop.MustCall(&action.DragAndDropParams{From: from, To: to, Duration: 1500})},
			`{"step_id":1,"action":"DragAndDrop","params":{"from":"Recipe 1","to":{"id":"e9"},"duration":1500}}`},
		{"check", Step{ID: 2, Expected: exist},
			`{"step_id":2,"action":"check","expected_state":{"kind":"exists","target":"Saved"}}`},
		{"wait", Step{ID: 3, Expected: exist, Wait: true, Sentence: `wait for "Saved"`},
			`{"step_id":3,"action":"check","expected_state":{"kind":"exists","target":"Saved"},"wait":true,"sentence":"wait for \"Saved\""}`},
		{"no params", Step{ID: 4, Call: action.RecentApps.MustCall(nil)},
			`{"step_id":4,"action":"RecentApps","params":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.step)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.json, string(raw)); d != "" {
				t.Errorf("JSON (-want +got):\n%s", d)
			}
			back, err := decodeStep(raw, space)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.step, back); d != "" {
				t.Errorf("read back (-want +got):\n%s", d)
			}
		})
	}
	for _, raw := range []string{`{"expected_state":{"kind":"EXIST","target":"x"}}`, `{"action":"CHECK","expected_state":{"kind":"EXIST","target":"x"}}`} {
		if st, err := decodeStep([]byte(raw), space); err != nil || !st.Call.IsZero() {
			t.Errorf("%s: %+v, %v; want a check-only step", raw, st, err)
		}
	}
}

// Decoding goes through the given space: an action of another platform is
// refused with the list of this one's, and bad params with the action's
// ValidationError.
func TestDecodeStepRefuses(t *testing.T) {
	ios := action.ForPlatform(device.IOS)
	_, err := decodeStep([]byte(`{"action":"PullGesture","params":{"direction":"down"}}`), ios)
	if !errors.Is(err, action.ErrUnknownAction) || !strings.Contains(err.Error(), "AppSwitcher") {
		t.Errorf("PullGesture on iOS: %v; want ErrUnknownAction listing the iOS actions", err)
	}
	_, err = decodeStep([]byte(`{"action":"Sleep","params":{"ms":-5}}`), ios)
	var ve *action.ValidationError
	if !errors.As(err, &ve) || ve.Action != "Sleep" {
		t.Errorf("Sleep -5 ms: %v; want Sleep's ValidationError", err)
	}
}
