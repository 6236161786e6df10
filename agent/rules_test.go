package agent

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlanRules(t *testing.T) {
	tests := []struct {
		goal string
		want []Step
	}{
		{`tap "Search", type "headphones", then check "Results" exists`, []Step{
			{ID: 1, Action: ActTap, Target: "Search", Expected: &Check{Kind: LayoutChanged}},
			{ID: 2, Action: ActInput, Value: "headphones", Expected: &Check{Kind: Exist, Target: "Results"}},
			{ID: 3, Action: ActCheck, Expected: &Check{Kind: Exist, Target: "Results"}},
		}},
		{`点击“搜索”，输入“耳机”，然后确认出现“结果”`, []Step{
			{ID: 1, Action: ActTap, Target: "搜索", Expected: &Check{Kind: LayoutChanged}},
			{ID: 2, Action: ActInput, Value: "耳机", Expected: &Check{Kind: Exist, Target: "结果"}},
			{ID: 3, Action: ActCheck, Expected: &Check{Kind: Exist, Target: "结果"}},
		}},
		{`type "demo" into "Username"; enter "apex123" in the "Password" field and then tap the "Sign in" button. Check "Welcome, demo!" is shown`, []Step{
			{ID: 1, Action: ActInput, Target: "Username", Value: "demo"},
			{ID: 2, Action: ActInput, Target: "Password", Value: "apex123"},
			{ID: 3, Action: ActTap, Target: "Sign in", Expected: &Check{Kind: Exist, Target: "Welcome, demo!"}},
			{ID: 4, Action: ActCheck, Expected: &Check{Kind: Exist, Target: "Welcome, demo!"}},
		}},
		{`在“添加商品”输入“酸奶”，点击“添加”，确认“共 5 项，已完成 1 项”存在，确认“酸奶”不存在`, []Step{
			{ID: 1, Action: ActInput, Target: "添加商品", Value: "酸奶"},
			{ID: 2, Action: ActTap, Target: "添加", Expected: &Check{Kind: Exist, Target: "共 5 项，已完成 1 项"}},
			{ID: 3, Action: ActCheck, Expected: &Check{Kind: Exist, Target: "共 5 项，已完成 1 项"}},
			{ID: 4, Action: ActCheck, Expected: &Check{Kind: NotExist, Target: "酸奶"}},
		}},
		{`open "Settings", go back, press enter, scroll down to "Garden 4", wait 1.5 s, wait for "Saved", check "Cart" reads "Cart (1)", verify "Brightness" is greater than 60, check "Wi-Fi" is off, launch "com.apex.shop"`, []Step{
			{ID: 1, Action: ActHome},
			{ID: 2, Action: ActTap, Target: "Settings", Expected: &Check{Kind: LayoutChanged}},
			{ID: 3, Action: ActBack},
			{ID: 4, Action: ActPress, Value: "enter"},
			{ID: 5, Action: ActScroll, Target: "Garden 4", Value: "down"},
			{ID: 6, Action: ActWait, Value: "1500"},
			{ID: 7, Action: ActWait, Target: "Saved"},
			{ID: 8, Action: ActCheck, Expected: &Check{Kind: TextEquals, Target: "Cart", Value: "Cart (1)"}},
			{ID: 9, Action: ActCheck, Expected: &Check{Kind: NumericGreater, Target: "Brightness", Value: "60"}},
			{ID: 10, Action: ActCheck, Expected: &Check{Kind: NotChecked, Target: "Wi-Fi"}},
			{ID: 11, Action: ActLaunch, Target: "com.apex.shop"},
		}},
		{`返回，向下滚动到“苹果”，长按“牛奶”，勾选“完成 酸奶”，确认“完成 酸奶”已勾选`, []Step{
			{ID: 1, Action: ActBack},
			{ID: 2, Action: ActScroll, Target: "苹果", Value: "down"},
			{ID: 3, Action: ActLongPress, Target: "牛奶", Expected: &Check{Kind: LayoutChanged}},
			{ID: 4, Action: ActTap, Target: "完成 酸奶", Expected: &Check{Kind: Checked, Target: "完成 酸奶"}},
			{ID: 5, Action: ActCheck, Expected: &Check{Kind: Checked, Target: "完成 酸奶"}},
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
