package agent

import (
	"fmt"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/scene"
)

// The prompts each role sends. They carry the distilled Scene text and the
// ≤50-character step summaries, never raw UI source or screenshots; the
// budget test counts them on every corpus screen.

// PromptBudget is the most tokens (cl100k) one role's prompt may take in a
// step; the Scene text gets what the rest of the prompt leaves.
const PromptBudget = 1500

// screenMark stands for the Scene text until withScreen fills it in.
const screenMark = "\x00SCREEN\x00"

// withScreen puts the distilled Scene into req where screenMark is, as much
// of it as fits the budget: the text is cut by Scene's own pruning (least
// useful elements first), never mid-line.
func withScreen(req *llm.Request, sc *scene.Scene) *llm.Request {
	fixed := countTokens(strings.Replace(promptText(req), screenMark, "", 1))
	room := PromptBudget - fixed - 8
	budget := promptBudget
	text := distill(sc, budget)
	for n := countTokens(text); n > room && budget > 200; n = countTokens(text) {
		budget = budget * room / n * 95 / 100
		text = distill(sc, max(budget, 200))
	}
	for i := range req.Messages {
		req.Messages[i].Text = strings.Replace(req.Messages[i].Text, screenMark, text, 1)
	}
	return req
}

func plannerRequest(goal string, sc *scene.Scene, progress string, space *action.Space) *llm.Request {
	user := "Goal: " + truncate(goal, 600) + "\n"
	if progress != "" {
		user += "Progress: " + progress + "\n"
	}
	user += "Screen:\n" + screenMark
	return withScreen(&llm.Request{JSON: true, Messages: []llm.Message{{Role: "system", Text: plannerSystem(space)}, {Role: "user", Text: user}}}, sc)
}

// executorRequest asks for the step's call with its locators found; the
// model is offered the tool of the step's action.
// An ambiguous target's candidates (cands, one a line) are listed for
// the model to choose from.
func executorRequest(st Step, why, cands string, sc *scene.Scene, progress string) *llm.Request {
	a := st.Call.Action
	user := "Step: " + stepText(st) + "\n"
	if progress != "" {
		user += "Progress: " + progress + "\n"
	}
	if cands != "" {
		user += "The target matches several elements; choose the one the step means by its id, or answer {\"error\":\"…\"} when none is meant:\nCandidates:\n" + cands
	} else {
		user += fmt.Sprintf("Rules could not resolve the target: %s\n", truncate(why, 200))
	}
	user += "Screen:\n" + screenMark
	return withScreen(&llm.Request{
		Messages: []llm.Message{{Role: "system", Text: executorSystem}, {Role: "user", Text: user}},
		Tools:    []llm.Tool{{Name: a.Name(), Description: a.Description(), Schema: a.SchemaJSON()}},
	}, sc)
}

func validatorRequest(assertion string, sc *scene.Scene) *llm.Request {
	return withScreen(&llm.Request{JSON: true, Messages: []llm.Message{
		{Role: "system", Text: validatorSystem},
		{Role: "user", Text: fmt.Sprintf("Assertion: %s\nScreen:\n%s", truncate(assertion, 300), screenMark)},
	}}, sc)
}

func queryRequest(question, kind string, sc *scene.Scene) *llm.Request {
	want := map[string]string{QueryAny: "JSON value shaped as the question asks", QueryBoolean: "boolean", QueryNumber: "number", QueryString: "string"}[kind]
	return withScreen(&llm.Request{JSON: true, Messages: []llm.Message{
		{Role: "system", Text: fmt.Sprintf(querySystem, want)},
		{Role: "user", Text: fmt.Sprintf("Question: %s\nScreen:\n%s", truncate(question, 300), screenMark)},
	}}, sc)
}
