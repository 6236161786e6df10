package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/google/go-cmp/cmp"
)

func init() {
	// The model first turns Wi-Fi off where it is only mentioned; told
	// that failed, it plans the way to its page.
	natural["Turn off Wi-Fi from here"] = `turn off "Wi-Fi"`
	replanned["Turn off Wi-Fi from here"] = `tap "Network & internet", turn off "Wi-Fi"`
}

// On/off verbs act on the switch labelled so, never on a row that merely
// mentions it: on Settings' main page the "Network & internet · Wi-Fi,
// airplane mode" row is no Wi-Fi switch. The rules refuse at once, naming
// the row to open; the model re-plans the way there; on the page that
// holds it, the switch is what is tapped.
func TestOnOffFindsTheSwitch(t *testing.T) {
	const row = "item Network & internet · Wi-Fi, airplane mode"
	tests := []struct {
		name    string
		byModel bool
		goal    string
		status  string
		wifi    bool
		touched []string
	}{
		{"rules refuse where it is only mentioned", false, `turn off "Wi-Fi"`, agent.Failed, true, nil},
		{"rules on its page", false, `tap "Network & internet", turn off "Wi-Fi"`, agent.Done, false, []string{row, "switch Wi-Fi"}},
		{"model plans the way", true, "Turn off Wi-Fi from here", agent.Done, false, []string{row, "switch Wi-Fi"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := startPhone(t, noPopupSeed)
			p.launch(t, settings)
			cfg := agent.Config{CheckTimeout: 300 * time.Millisecond, Perception: noOCR}
			var m *scriptedModel
			if tc.byModel {
				m = newScripted()
				_, cfg.LLM = m.start(t)
			}
			rt, _ := agent.New(cfg)
			res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: tc.goal, Driver: p.drv})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s: %s\n%s", res.Status, tc.status, res.Reason, dump(res.Events))
			}
			if got := p.state(t, settings)["wifi"]; got != tc.wifi {
				t.Fatalf("wifi = %v, want %v\n%s", got, tc.wifi, dump(res.Events))
			}
			// The row is touched only by the step that names it; the
			// switch steps touch the switch.
			var touched []string
			for _, a := range payloads[struct {
				Element *struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"element"`
			}](t, res.Events, event.EvActed) {
				if e := a.Element; e != nil {
					touched = append(touched, e.Type+" "+e.Text)
				}
			}
			if d := cmp.Diff(tc.touched, touched); d != "" {
				t.Fatalf("touched (-want +got):\n%s\n%s", d, dump(res.Events))
			}
			switch {
			case tc.status == agent.Failed:
				if !strings.Contains(res.Reason, `no switch or checkbox labelled "Wi-Fi"`) || !strings.Contains(res.Reason, "Network & internet") {
					t.Fatalf("reason %q does not name the row to open", res.Reason)
				}
				if len(strategies(t, res.Events)) != 0 || res.Replans != 0 {
					t.Fatalf("the refusal retried or re-planned\n%s", dump(res.Events))
				}
			case tc.byModel:
				if res.Replans != 1 || m.count("executor") != 0 {
					t.Fatalf("%d re-plans, %d executor calls: want the planner, not the executor, to find the way\n%s", res.Replans, m.count("executor"), dump(res.Events))
				}
			}
		})
	}
}
