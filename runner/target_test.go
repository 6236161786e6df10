package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/store"
	"github.com/google/go-cmp/cmp"
)

// TestStepNames names steps as they were written: a prompt as its text,
// fields as their compact JSON in the locator's field order.
func TestStepNames(t *testing.T) {
	cases := []struct{ step, want string }{
		{"tap: Search", "tap: Search"},
		{"tap: {desc: Close}", `tap: {"desc":"Close"}`},
		{"tap: {prompt: the close button}", "tap: the close button"},
		{"tap: {index: 1, text: Add to cart}", `tap: {"text":"Add to cart","index":1}`},
		{"aiTap: the \"Search\" button", `aiTap: the "Search" button`},
		{"input: {id: q}\n        value: shoes", `input: "shoes" into {"id":"q"}`},
		{"input: the box\n        mode: clear", "input: the box (clear)"},
		{"aiKeyboardPress: Enter", "aiKeyboardPress: Enter"},
		{"assert: {exists: Order placed}", "assert: exists Order placed"},
		{"assert: {textEquals: Cart (1), element: {id: cart}}", `assert: {"id":"cart"} textEquals "Cart (1)"`},
		{"waitFor: {text: Done, type: text}", `waitFor: {"text":"Done","type":"text"}`},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			s := load(t, "tasks:\n  - name: t\n    flow:\n      - "+c.step+"\n")
			if d := cmp.Diff(c.want, StepName(s.Tasks[0].Steps[0])); d != "" {
				t.Errorf("name (-want +got):\n%s", d)
			}
		})
	}
}

// TestTargetIndexPicks runs taps whose target has an index on the fake
// shop's two "Add to cart" buttons: an index, even 0, picks one; none is
// ambiguous.
func TestTargetIndexPicks(t *testing.T) {
	cases := []struct {
		target string
		tapY   int    // where the tap landed; 0 = no tap
		fail   string // a part of the reason when the step fails
	}{
		{"{text: Add to cart, index: 0}", 350, ""},
		{"{text: Add to cart, index: 1}", 550, ""},
		{"{text: Add to cart}", 0, "matches 2 elements"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			dev := newFakeShop()
			src := "tasks:\n  - name: t\n    flow:\n      - tap: Search\n      - tap: " + c.target + "\n"
			res, err := Run(context.Background(), dev, load(t, src), fastOptions(openStore(t)))
			if err != nil {
				t.Fatal(err)
			}
			if c.fail != "" {
				if res.Status != store.StatusFailed || !strings.Contains(res.Reason, c.fail) {
					t.Fatalf("run %s: %q; want a failure with %q", res.Status, res.Reason, c.fail)
				}
				return
			}
			if res.Status != store.StatusPassed {
				t.Fatalf("run %s: %s", res.Status, res.Reason)
			}
			if last := dev.taps[len(dev.taps)-1]; last.Y != c.tapY || dev.cart != 1 {
				t.Errorf("tapped %v, cart %d; want y=%d and one item", last, dev.cart, c.tapY)
			}
		})
	}
}

// TestBadTargetFailsItsStep runs steps built in Go (as a face may build
// them) whose targets are not locators: each fails as a step naming its
// script position, and the run goes on recording.
func TestBadTargetFailsItsStep(t *testing.T) {
	cases := []struct{ target, want string }{
		{`{"label":"x"}`, "label: unknown field"},
		{`{"index":1}`, "says nothing to find"},
		{`{"text":"x","index":-1}`, "index"},
		{`""`, "is empty"},
		{`[1]`, "expected a string or an object"},
		{`{"text":`, "unexpected end of JSON input"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			pos := script.Pos{File: "built.yaml", Line: 3, Col: 9}
			s := &script.Script{File: "built.yaml", Tasks: []script.Task{{Name: "t", Steps: []script.Step{
				{Kind: script.Tap, Key: "tap", Target: json.RawMessage(c.target), Pos: pos},
			}}}}
			st := openStore(t)
			res, err := Run(context.Background(), newFakeShop(), s, fastOptions(st))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != store.StatusFailed {
				t.Fatalf("run %s: %s", res.Status, res.Reason)
			}
			steps, err := st.Steps(context.Background(), res.Run.ID)
			if err != nil || len(steps) != 1 {
				t.Fatalf("recorded steps = %d, %v", len(steps), err)
			}
			for _, want := range []string{"built.yaml:3:9: tap target", c.want, "write the element as text"} {
				if !strings.Contains(steps[0].Error, want) {
					t.Errorf("step error %q lacks %q", steps[0].Error, want)
				}
			}
		})
	}
}
