package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/llm"
)

// Models gives each role its model client, with the role's settings;
// *llm.Config does.
type Models interface {
	Client(role string) (llm.Client, error)
}

// configured reports whether m can give clients: not nil, and Configured
// when it says.
func configured(m Models) bool {
	if m == nil {
		return false
	}
	if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer && v.IsNil() {
		return false
	}
	if c, ok := m.(interface{ Configured() bool }); ok {
		return c.Configured()
	}
	return true
}

// ErrNeedsModel is returned for goals only a model can handle when none is
// configured.
var ErrNeedsModel = errors.New("needs a model")

// ErrRawSource is returned (wrapped) when a prompt would carry raw UI XML.
var ErrRawSource = errors.New("prompt contains raw UI source")

// rawMarkers betray raw uiautomator or XCUITest source in a prompt.
var rawMarkers = []string{"<?xml", "<hierarchy", "<node ", "<XCUIElementType", "<AppiumAUT"}

// promptText is everything a request sends as text.
func promptText(req *llm.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Text)
		b.WriteByte('\n')
	}
	for _, t := range req.Tools {
		b.WriteString(t.Name)
		b.WriteByte(' ')
		b.WriteString(t.Description)
		b.Write(t.Schema)
		b.WriteByte('\n')
	}
	return b.String()
}

// countTokens counts prompt tokens with the offline cl100k tokenizer.
var countTokens = llm.Tokens

// modelCall is the model_call event's payload.
type modelCall struct {
	Role string `json:"role"`
	// PromptTokens are counted here before sending: the text with cl100k,
	// pictures as llm.ImageTokens estimates them (ImageTokens of them).
	PromptTokens int       `json:"prompt_tokens"`
	Images       int       `json:"images,omitempty"`
	ImageTokens  int       `json:"image_tokens,omitempty"`
	Usage        llm.Usage `json:"usage"` // as the model reported
	Model        string    `json:"model,omitempty"`
	Error        string    `json:"error,omitempty"`
}

// roleModel is one role's model, accounted on the task's bus.
type roleModel struct {
	role string
	c    llm.Client
	// sees: the role is sent screenshots (llm.SeesImages); show attaches
	// them from obs.
	sees bool
	obs  *observer
	bus  *bus
	mu   *sync.Mutex
	// usage is the task's total; maxPrompt the largest prompt seen.
	usage     *llm.Usage
	maxPrompt *int
}

func (m *roleModel) complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	req.Role = m.role
	text := promptText(req)
	for _, mk := range rawMarkers {
		if strings.Contains(text, mk) {
			return nil, fmt.Errorf("agent: %s prompt: %w (%q)", m.role, ErrRawSource, mk)
		}
	}
	call := modelCall{Role: m.role}
	for _, msg := range req.Messages {
		for _, img := range msg.Images {
			call.Images++
			call.ImageTokens += llm.ImageTokens(img)
		}
	}
	tokens := countTokens(text) + call.ImageTokens
	call.PromptTokens = tokens
	resp, err := m.c.Complete(llm.WithTask(ctx, m.bus.taskID), req)
	status := event.StatusOK
	if err != nil {
		call.Error, status = err.Error(), event.StatusFailed
	} else {
		call.Usage, call.Model = resp.Usage, resp.Model
	}
	m.mu.Lock()
	*m.usage = m.usage.Add(call.Usage)
	*m.maxPrompt = max(*m.maxPrompt, tokens)
	m.mu.Unlock()
	m.bus.publish(ctx, m.role, event.RoleOrchestrator, event.EvModelCall, call, status, 0)
	if err != nil {
		return nil, fmt.Errorf("%s model: %w", m.role, err)
	}
	return resp, nil
}

// jsonObject extracts the first JSON object from a model's text answer,
// leniently: code fences and prose around it are ignored.
func jsonObject(text string) (json.RawMessage, error) {
	start := strings.IndexAny(text, "{[")
	if start < 0 {
		return nil, fmt.Errorf("the answer holds no JSON: %q", truncate(text, 120))
	}
	dec := json.NewDecoder(strings.NewReader(text[start:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("the answer's JSON is malformed: %w", err)
	}
	return raw, nil
}

// plannerSystem tells the planner how to plan on a device with space's
// actions. Its example is real steps, encoded as plans are.
func plannerSystem(space *action.Space) string {
	example, err := json.Marshal(map[string][]Step{"steps": {
		{ID: 1, Call: tapOn(action.Tap, "Search"), Expected: &check.Check{Kind: check.Exists, Target: check.ParseTarget("Results")}},
		{ID: 2, Expected: &check.Check{Kind: check.TextContains, Target: check.ParseTarget("Results"), Text: "headphones"}},
	}})
	if err != nil {
		panic(err) // the example is code
	}
	return `You are the planner of a phone-automation agent. Turn the goal into at most 15 steps, each one action of the list below with its params.
Answer with JSON only: ` + string(example) + `
A step with "action":"check" (no params) only checks its expected_state; "wait":true gives a slow screen longer to reach it.
expected_state kinds: EXIST, NOT_EXIST, TEXT_EQUALS, TEXT_CONTAINS, NUMERIC_GREATER, NUMERIC_LESS, CHECKED, NOT_CHECKED, LAYOUT_CHANGED; omit when unsure.
Use the screen's visible texts in locators. Do not repeat steps listed as done.
` + space.Brief()
}

const executorSystem = `You are the executor of a phone-automation agent. Carry out exactly the one step given by calling one tool.
In locator params name elements by their id from the screen list, e.g. {"id":"e7"}. If you cannot call tools, or the step needs another action, answer JSON {"action":"Tap","params":{...}}.`

const validatorSystem = `You are the validator of a phone-automation agent. Decide the assertion from the screen list, and from the screenshot when one is attached: judge what it shows, not exact pixels; never guess.
Answer JSON only: {"pass":true,"confidence":0.95,"evidence":"e7 reads ..."}. confidence is how sure you are (0..1).`

const querySystem = `You read a phone screen for a phone-automation agent. Answer the question from the screen list, and from the screenshot when one is attached.
Answer JSON only: {"answer": ...} where answer is a %s.`
