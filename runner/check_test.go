package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
)

// TestAssertOnTheSimulatedPhone runs assert steps on the simulated Login
// app: each passes on firm evidence, or fails saying what it saw.
func TestAssertOnTheSimulatedPhone(t *testing.T) {
	_, d := startPhone(t, lab.Options{Android: 1})
	tests := []struct {
		name string
		flow string
		want string // "" = passes; else a part of the reason
	}{
		{"enabled", "- assert: {enabled: {id: sign_in}}", ""},
		{"focused after a tap", "- tap: {id: username}\n      - assert: {focused: {id: username}}", ""},
		{"not focused", "- assert: {focused: {id: password}}", "is not focused"},
		{"count", "- assert: {count: 2, element: {type: input}}", ""},
		{"count differs", "- assert: {count: 3, element: {type: input}}", "matches 2 elements (want 3)"},
		{"checked by its label", "- assert: {notChecked: Remember me}", ""},
		{"text equal only ignoring case is not enough", "- assert: {textEquals: welcome back, element: {id: heading}}", "only ignoring case"},
		{"which element's text is ambiguous", "- assert: {textEquals: x, element: {type: input}}", "matches 2 elements"},
		{"loose words are no evidence", "- assert: {exists: continue sign}", "only a loose match"},
		{"the message leads", "- assert: {exists: Create account, message: no way to sign up}", "assertion failed: no way to sign up (no element matches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "android:\n  launch: com.apex.login\ntasks:\n  - name: t\n    flow:\n      " + tt.flow + "\n"
			opts := fastOptions(openStore(t))
			opts.Perception.Mode = perceive.Off // the tree decides these; pixels are ocr_test's
			res, err := Run(context.Background(), d, load(t, src), opts)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && res.Status != store.StatusPassed:
				t.Fatalf("run %s: %s", res.Status, res.Reason)
			case tt.want != "" && (res.Status != store.StatusFailed || !strings.Contains(res.Reason, tt.want)):
				t.Fatalf("run %s: %q, want a failure with %q", res.Status, res.Reason, tt.want)
			}
		})
	}
}
