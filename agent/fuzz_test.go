package agent

import (
	"errors"
	"testing"
)

// FuzzPlanRules feeds the rule planner arbitrary goals: it never panics,
// and either says which sentence it could not read or returns a valid plan.
func FuzzPlanRules(f *testing.F) {
	for _, s := range []string{
		`tap "Search", type "headphones", then check "Results" exists`,
		`点击“搜索”，输入“耳机”，然后确认出现“结果”`,
		`type "a, b" into "x"; wait 2 s and then scroll down to "y". check "z" is greater than 3`,
		`open "Shop"`, `“unterminated`, `check "x" reads "y" and "z" contains "w"`, "", ",,,",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, goal string) {
		steps, err := PlanRules(goal)
		if err != nil {
			var ue *UnderstandError
			if errors.As(err, &ue) && (ue.Index < 1 || ue.Index > ue.Count) {
				t.Fatalf("sentence %d of %d", ue.Index, ue.Count)
			}
			return
		}
		if err := validatePlan(steps); err != nil {
			t.Fatalf("PlanRules returned an invalid plan: %v", err)
		}
		for i, s := range steps {
			if s.ID != i+1 {
				t.Fatalf("step %d has id %d", i+1, s.ID)
			}
		}
	})
}

// FuzzModelAnswer feeds the lenient JSON extraction and the plan decoding
// arbitrary model answers.
func FuzzModelAnswer(f *testing.F) {
	for _, s := range []string{
		"```json\n{\"steps\":[{\"step_id\":1,\"action\":\"Launch\",\"params\":{\"app\":\"com.apex.shop\"}}]}\n```",
		`Sure! [{"action":"back"}]`, `[{"action":"DragAndDrop","params":{"from":"a","to":{"id":"e3"}}},{"action":"check","expected_state":{"kind":"EXIST","target":"a"}}]`, `{"pass":true,"confidence":0.9}`, "no json", "{", `{"steps":[{}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		raw, err := jsonObject(answer)
		if err != nil {
			return
		}
		steps, err := decodePlan(raw, knownActions())
		if err == nil {
			if verr := validatePlan(steps); verr != nil {
				t.Fatalf("decodePlan accepted an invalid plan: %v", verr)
			}
		}
	})
}
