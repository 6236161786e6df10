package agent

import (
	"fmt"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/scene"
)

// The prompts each role sends. They carry the distilled Scene text and the
// ≤50-character step summaries, never raw UI source or screenshots; the
// budget benchmark counts them on every corpus screen.

func plannerRequest(goal string, sc *scene.Scene, progress string) *llm.Request {
	user := "Goal: " + goal + "\n"
	if progress != "" {
		user += "Progress: " + progress + "\n"
	}
	user += "Screen:\n" + distill(sc, promptBudget)
	return &llm.Request{JSON: true, Messages: []llm.Message{{Role: "system", Text: plannerSystem}, {Role: "user", Text: user}}}
}

func executorRequest(st Step, why string, sc *scene.Scene, a *action.Action, progress string) *llm.Request {
	user := "Step: " + stepText(st) + "\n"
	if progress != "" {
		user += "Progress: " + progress + "\n"
	}
	user += fmt.Sprintf("Rules could not resolve the target: %s\nScreen:\n%s", truncate(why, 200), distill(sc, promptBudget))
	return &llm.Request{
		Messages: []llm.Message{{Role: "system", Text: executorSystem}, {Role: "user", Text: user}},
		Tools:    []llm.Tool{{Name: a.Name(), Description: a.Description(), Schema: a.SchemaJSON()}},
	}
}

func validatorRequest(assertion string, sc *scene.Scene) *llm.Request {
	return &llm.Request{JSON: true, Messages: []llm.Message{
		{Role: "system", Text: validatorSystem},
		{Role: "user", Text: fmt.Sprintf("Assertion: %s\nScreen:\n%s", assertion, distill(sc, promptBudget))},
	}}
}

func queryRequest(question, kind string, sc *scene.Scene) *llm.Request {
	want := map[string]string{QueryAny: "JSON value shaped as the question asks", QueryBoolean: "boolean", QueryNumber: "number", QueryString: "string"}[kind]
	return &llm.Request{JSON: true, Messages: []llm.Message{
		{Role: "system", Text: fmt.Sprintf(querySystem, want)},
		{Role: "user", Text: fmt.Sprintf("Question: %s\nScreen:\n%s", question, distill(sc, promptBudget))},
	}}
}
