package agent

import (
	"errors"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/google/go-cmp/cmp"
)

func expected(k check.Kind, target string) *check.Check {
	return &check.Check{Kind: k, Target: check.ParseTarget(target)}
}

func TestPlanRules(t *testing.T) {
	tests := []struct {
		goal string
		want []Step
	}{
		{`tap "Search", type "headphones", then check "Results" exists`, []Step{
			{ID: 1, Action: ActTap, Target: "Search", Expected: expected(check.LayoutChanged, "")},
			{ID: 2, Action: ActInput, Value: "headphones", Expected: expected(check.Exists, "Results")},
			{ID: 3, Action: ActCheck, Expected: expected(check.Exists, "Results")},
		}},
		{`点击“搜索”，输入“耳机”，然后确认出现“结果”`, []Step{
			{ID: 1, Action: ActTap, Target: "搜索", Expected: expected(check.LayoutChanged, "")},
			{ID: 2, Action: ActInput, Value: "耳机", Expected: expected(check.Exists, "结果")},
			{ID: 3, Action: ActCheck, Expected: expected(check.Exists, "结果")},
		}},
		{`type "demo" into "Username"; enter "apex123" in the "Password" field and then tap the "Sign in" button. Check "Welcome, demo!" is shown`, []Step{
			{ID: 1, Action: ActInput, Target: "Username", Value: "demo"},
			{ID: 2, Action: ActInput, Target: "Password", Value: "apex123"},
			{ID: 3, Action: ActTap, Target: "Sign in", Expected: expected(check.Exists, "Welcome, demo!")},
			{ID: 4, Action: ActCheck, Expected: expected(check.Exists, "Welcome, demo!")},
		}},
		{`在“添加商品”输入“酸奶”，点击“添加”，确认“共 5 项，已完成 1 项”存在，确认“酸奶”不存在`, []Step{
			{ID: 1, Action: ActInput, Target: "添加商品", Value: "酸奶"},
			{ID: 2, Action: ActTap, Target: "添加", Expected: expected(check.Exists, "共 5 项，已完成 1 项")},
			{ID: 3, Action: ActCheck, Expected: expected(check.Exists, "共 5 项，已完成 1 项")},
			{ID: 4, Action: ActCheck, Expected: expected(check.NotExists, "酸奶")},
		}},
		{`open "Settings", go back, press enter, scroll down to "Garden 4", wait 1.5 s, wait for "Saved", check "Cart" reads "Cart (1)", verify "Brightness" is greater than 60, check "Wi-Fi" is off, launch "com.apex.shop"`, []Step{
			{ID: 1, Action: ActHome},
			{ID: 2, Action: ActTap, Target: "Settings", Expected: expected(check.LayoutChanged, "")},
			{ID: 3, Action: ActBack},
			{ID: 4, Action: ActPress, Value: "enter"},
			{ID: 5, Action: ActScroll, Target: "Garden 4", Value: "down"},
			{ID: 6, Action: ActWait, Value: "1500"},
			{ID: 7, Action: ActWait, Target: "Saved"},
			{ID: 8, Action: ActCheck, Expected: &check.Check{Kind: check.TextEquals, Target: check.ParseTarget("Cart"), Text: "Cart (1)"}},
			{ID: 9, Action: ActCheck, Expected: &check.Check{Kind: check.NumberGreater, Target: check.ParseTarget("Brightness"), Number: 60}},
			{ID: 10, Action: ActCheck, Expected: expected(check.NotChecked, "Wi-Fi")},
			{ID: 11, Action: ActLaunch, Target: "com.apex.shop"},
		}},
		{`返回，向下滚动到“苹果”，长按“牛奶”，勾选“完成 酸奶”，确认“完成 酸奶”已勾选`, []Step{
			{ID: 1, Action: ActBack},
			{ID: 2, Action: ActScroll, Target: "苹果", Value: "down"},
			{ID: 3, Action: ActLongPress, Target: "牛奶", Expected: expected(check.LayoutChanged, "")},
			{ID: 4, Action: ActTap, Target: "完成 酸奶", Expected: expected(check.Checked, "完成 酸奶")},
			{ID: 5, Action: ActCheck, Expected: expected(check.Checked, "完成 酸奶")},
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
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
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
