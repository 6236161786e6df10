package report

import (
	"encoding/json"

	"github.com/apexagent/apex/event"
)

// modelUse sums the model calls the run's AI steps recorded (model_call
// events of its tasks): how many, and their tokens.
type modelUse struct {
	Tasks, Calls                   int
	PromptTokens, CompletionTokens int
}

// modelCall is the part of a model_call event's payload the report reads.
type modelCall struct {
	PromptTokens int `json:"prompt_tokens"` // counted before sending
	Usage        struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"` // as the model reported
}

func sumModelUse(events []event.Event) *modelUse {
	tasks := map[string]bool{}
	var u modelUse
	for _, e := range events {
		tasks[e.TaskID] = true
		if e.ActionType != "model_call" {
			continue
		}
		var mc modelCall
		if json.Unmarshal(e.Payload, &mc) != nil {
			continue
		}
		u.Calls++
		// The model's own count when it gave one, else ours.
		if mc.Usage.PromptTokens > 0 {
			u.PromptTokens += mc.Usage.PromptTokens
		} else {
			u.PromptTokens += mc.PromptTokens
		}
		u.CompletionTokens += mc.Usage.CompletionTokens
	}
	if len(tasks) == 0 {
		return nil
	}
	u.Tasks = len(tasks)
	return &u
}
