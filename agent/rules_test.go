package agent

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
)

// Steps a test expects, built as the rule planner builds them.
func tapStep(a *action.Action, target string, c *check.Check) Step {
	return Step{Call: tapOn(a, target), Expected: c}
}

func inputStep(value, field string, c *check.Check) Step {
	p := &action.InputParams{Value: value}
	if field != "" {
		l := action.Locator{Prompt: field}
		p.Locate = &l
	}
	return Step{Call: action.Input.MustCall(p), Expected: c}
}

func checkStep(c *check.Check) Step { return Step{Expected: c} }

func expected(k check.Kind, target string) *check.Check {
	return &check.Check{Kind: k, Target: check.ParseTarget(target)}
}

func TestPlanRules(t *testing.T) {
	changed := &check.Check{Kind: check.LayoutChanged}
	exist := func(s string) *check.Check { return expected(check.Exists, s) }
	garden, apple := action.Locator{Prompt: "Garden 4"}, action.Locator{Prompt: "苹果"}
	tests := []struct {
		goal string
		want []Step
	}{
		{`tap "Search", type "headphones", then check "Results" exists`, []Step{
			tapStep(action.Tap, "Search", changed),
			inputStep("headphones", "", exist("Results")),
			checkStep(exist("Results")),
		}},
		{`点击“搜索”，输入“耳机”，然后确认出现“结果”`, []Step{
			tapStep(action.Tap, "搜索", changed),
			inputStep("耳机", "", exist("结果")),
			checkStep(exist("结果")),
		}},
		{`type "demo" into "Username"; enter "apex123" in the "Password" field and then tap the "Sign in" button. Check "Welcome, demo!" is shown`, []Step{
			inputStep("demo", "Username", nil),
			inputStep("apex123", "Password", nil),
			tapStep(action.Tap, "Sign in", exist("Welcome, demo!")),
			checkStep(exist("Welcome, demo!")),
		}},
		{`在“添加商品”输入“酸奶”，点击“添加”，确认“共 5 项，已完成 1 项”存在，确认“酸奶”不存在`, []Step{
			inputStep("酸奶", "添加商品", nil),
			tapStep(action.Tap, "添加", exist("共 5 项，已完成 1 项")),
			checkStep(exist("共 5 项，已完成 1 项")),
			checkStep(expected(check.NotExists, "酸奶")),
		}},
		{`open "Settings", go back, press enter, scroll down to "Garden 4", wait 1.5 s, wait for "Saved", check "Cart" reads "Cart (1)", verify "Brightness" is greater than 60, check "Wi-Fi" is off, launch "com.apex.shop", double tap "Zoom", submit`, []Step{
			{Call: action.Home.MustCall(nil)},
			tapStep(action.Tap, "Settings", changed),
			{Call: action.Back.MustCall(nil)},
			{Call: action.KeyboardPress.MustCall(&action.KeyboardPressParams{KeyName: "enter"})},
			{Call: action.Scroll.MustCall(&action.ScrollParams{Direction: "down", UntilVisible: &garden})},
			{Call: action.Sleep.MustCall(&action.SleepParams{Ms: 1500})},
			{Expected: exist("Saved"), Wait: true},
			checkStep(&check.Check{Kind: check.TextEquals, Target: check.ParseTarget("Cart"), Text: "Cart (1)"}),
			checkStep(&check.Check{Kind: check.NumberGreater, Target: check.ParseTarget("Brightness"), Number: 60}),
			checkStep(expected(check.NotChecked, "Wi-Fi")),
			{Call: action.Launch.MustCall(&action.AppParams{App: "com.apex.shop"})},
			tapStep(action.DoubleTap, "Zoom", changed),
			{Call: action.KeyboardPress.MustCall(&action.KeyboardPressParams{KeyName: "enter"})},
		}},
		{`返回，向下滚动到“苹果”，长按“牛奶”，勾选“完成 酸奶”，确认“完成 酸奶”已勾选`, []Step{
			{Call: action.Back.MustCall(nil)},
			{Call: action.Scroll.MustCall(&action.ScrollParams{Direction: "down", UntilVisible: &apple})},
			{Call: action.LongPress.MustCall(&action.LongPressParams{Locate: action.Locator{Prompt: "牛奶"}}), Expected: changed},
			tapStep(action.Tap, "完成 酸奶", expected(check.Checked, "完成 酸奶")),
			checkStep(expected(check.Checked, "完成 酸奶")),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.goal, func(t *testing.T) {
			got, err := PlanRules(tt.goal)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i].Sentence = ""
				tt.want[i].ID = i + 1
			}
			if d := cmp.Diff(stepsJSON(t, tt.want), stepsJSON(t, got)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			// Every step is a call of the device's actions, with valid
			// params: the rules build nothing a model's plan could not.
			if err := bindPlan(got, action.ForPlatform(device.Android)); err != nil {
				t.Error(err)
			}
		})
	}
}

// stepsJSON renders steps one JSON line each, for a readable diff.
func stepsJSON(t *testing.T, steps []Step) []string {
	t.Helper()
	var out []string
	for _, s := range steps {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func TestParseChecks(t *testing.T) {
	tests := []struct {
		goal string
		want []check.Check
	}{
		{`"Cart (0)" exists, "Search" is shown`, []check.Check{*expected(check.Exists, "Cart (0)"), *expected(check.Exists, "Search")}},
		{`check "id:com.apex.shop:id/cart" reads "Cart (1)"`, []check.Check{{Kind: check.TextEquals, Target: action.Locator{ID: "com.apex.shop:id/cart"}, Text: "Cart (1)"}}},
		{`"Total" is less than 12.5`, []check.Check{{Kind: check.NumberLess, Target: check.ParseTarget("Total"), Number: 12.5}}},
		{`"Add to cart" shows 3 times`, []check.Check{{Kind: check.Count, Target: check.ParseTarget("Add to cart"), Number: 3}}},
		{`"Pay" can be used and "Card number" has focus`, []check.Check{*expected(check.Enabled, "Pay"), *expected(check.Focused, "Card number")}},
		{`"Sign in" is in the header`, []check.Check{{Kind: check.Region, Regions: []check.RegionText{{Name: "header", Text: "Sign in", MustExist: new(true)}}}}},
		{`the screen changed`, []check.Check{{Kind: check.LayoutChanged}}},
		{`确认“加入购物车”出现了2次，“支付”可用，“卡号”获得焦点`, []check.Check{{Kind: check.Count, Target: check.ParseTarget("加入购物车"), Number: 2},
			*expected(check.Enabled, "支付"), *expected(check.Focused, "卡号")}},
	}
	for _, tt := range tests {
		t.Run(tt.goal, func(t *testing.T) {
			got, err := parseChecks(tt.goal)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			// A check's own sentence reads back as the same check.
			for _, c := range got {
				back, err := parseChecks(c.String())
				if err != nil || len(back) != 1 {
					t.Fatalf("%s does not read back: %v", c.String(), err)
				}
				if d := cmp.Diff(c, back[0]); d != "" {
					t.Errorf("%s read back (-want +got)\n%s", c.String(), d)
				}
			}
		})
	}
}

func TestPlanRulesNotUnderstood(t *testing.T) {
	for _, tt := range []struct {
		goal  string
		index int
	}{
		{`tap "Search", fly to the moon, check "X" exists`, 2},
		{`点击“搜索”，飞到月球`, 2},
		{`buy me some headphones`, 1},
	} {
		_, err := PlanRules(tt.goal)
		var ue *UnderstandError
		if !errors.As(err, &ue) || ue.Index != tt.index {
			t.Errorf("%q: err = %v, want an UnderstandError for sentence %d", tt.goal, err, tt.index)
		}
	}
	if _, err := PlanRules("  "); err == nil {
		t.Error("empty goal: no error")
	}
}

// TestGoalForms plans every example of docs/goals.md's tables and compares
// the steps with the table's third column: the document is the test.
func TestGoalForms(t *testing.T) {
	doc, err := os.ReadFile("../docs/goals.md")
	if err != nil {
		t.Fatal(err)
	}
	rowRE := regexp.MustCompile("^\\| ([^|]+) \\| `([^`]+)` \\| `([^`]+)` \\|$")
	rows := 0
	for _, line := range strings.Split(string(doc), "\n") {
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		form, goal, want := m[1], m[2], m[3]
		t.Run(form, func(t *testing.T) {
			steps, err := PlanRules(goal)
			if want == "needs a model" {
				var ue *UnderstandError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), "APEX_MODEL_BASE_URL") {
					t.Fatalf("PlanRules(%q) = %v, %v; want an UnderstandError naming what to set", goal, steps, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("PlanRules(%q): %v", goal, err)
			}
			var got []string
			for _, st := range steps {
				s := stepText(st)
				if !st.Call.IsZero() && st.Expected != nil {
					s += " → " + st.Expected.String()
				}
				got = append(got, s)
			}
			if d := cmp.Diff(want, strings.Join(got, "; ")); d != "" {
				t.Errorf("PlanRules(%q) (-want +got):\n%s", goal, d)
			}
		})
	}
	if rows < 60 {
		t.Fatalf("docs/goals.md has %d rows; its tables were not read", rows)
	}
}
