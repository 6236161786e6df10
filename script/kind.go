package script

import (
	"sort"
)

// Kind is the canonical name of a step.
type Kind string

// Midscene's flow steps. Aliases (ai, aiAction, recordToReport) map onto these.
const (
	AIAct           Kind = "aiAct"
	AITap           Kind = "aiTap"
	AIDoubleClick   Kind = "aiDoubleClick"
	AILongPress     Kind = "aiLongPress"
	AIHover         Kind = "aiHover"
	AIRightClick    Kind = "aiRightClick"
	AIInput         Kind = "aiInput"
	AIScroll        Kind = "aiScroll"
	AIKeyboardPress Kind = "aiKeyboardPress"
	AIAssert        Kind = "aiAssert"
	AIQuery         Kind = "aiQuery"
	AIBoolean       Kind = "aiBoolean"
	AINumber        Kind = "aiNumber"
	AIString        Kind = "aiString"
	AIAsk           Kind = "aiAsk"
	AIWaitFor       Kind = "aiWaitFor"
	AILocate        Kind = "aiLocate"
	Sleep           Kind = "sleep"
	RunAdbShell     Kind = "runAdbShell"
	RunWdaRequest   Kind = "runWdaRequest"
	LogScreenshot   Kind = "logScreenshot"
	JavaScript      Kind = "javascript"
)

// Deterministic steps: they never need a model.
const (
	Tap                Kind = "tap"
	DoubleTap          Kind = "doubleTap"
	LongPress          Kind = "longPress"
	Input              Kind = "input"
	AssertStep         Kind = "assert"
	WaitFor            Kind = "waitFor"
	Launch             Kind = "launch"
	Terminate          Kind = "terminate"
	Back               Kind = "back"
	Home               Kind = "home"
	SwipeStep          Kind = "swipe"
	ScrollUntilVisible Kind = "scrollUntilVisible"
	PressKey           Kind = "pressKey"
	// Read stores the text of an element as a value: read: {locate, as}.
	Read Kind = "read"
	// Control steps: they hold steps of their own.
	RunFlow Kind = "runFlow"
	If      Kind = "if"
	Repeat  Kind = "repeat"
	// Action is a generic step: its key names an action of the action space
	// and its value holds that action's params.
	Action Kind = "action"
)

// aliases maps every key a script may use to its Kind.
var aliases = map[string]Kind{
	"ai": AIAct, "aiAct": AIAct, "aiAction": AIAct,
	"aiTap": AITap, "aiDoubleClick": AIDoubleClick, "aiLongPress": AILongPress,
	"aiHover": AIHover, "aiRightClick": AIRightClick, "aiInput": AIInput,
	"aiScroll": AIScroll, "aiKeyboardPress": AIKeyboardPress, "aiAssert": AIAssert,
	"aiQuery": AIQuery, "aiBoolean": AIBoolean, "aiNumber": AINumber, "aiString": AIString,
	"aiAsk": AIAsk, "aiWaitFor": AIWaitFor, "aiLocate": AILocate, "sleep": Sleep,
	"runAdbShell": RunAdbShell, "runWdaRequest": RunWdaRequest,
	"logScreenshot": LogScreenshot, "recordToReport": LogScreenshot, "javascript": JavaScript,

	"tap": Tap, "doubleTap": DoubleTap, "longPress": LongPress, "input": Input,
	"assert": AssertStep, "waitFor": WaitFor, "launch": Launch, "terminate": Terminate,
	"back": Back, "home": Home, "swipe": SwipeStep, "scrollUntilVisible": ScrollUntilVisible,
	"pressKey": PressKey,

	"aiClearInput": AIClearInput, "aiDragAndDrop": AIDragAndDrop, "aiPinch": AIPinch,
	"read": Read, "runFlow": RunFlow, "if": If, "repeat": Repeat,
}

// NeedsModel reports whether a step of this kind can only run with a model.
// Steps that name a target (aiTap, aiInput, …) are not in this set: the
// runner first tries locator rules on their prompt.
func (k Kind) NeedsModel() bool {
	switch k {
	case AIAct, AIAssert, AIQuery, AIBoolean, AINumber, AIString, AIAsk, AIWaitFor:
		return true
	}
	return false
}

// IsAI reports whether the kind is one of Midscene's ai* steps.
func (k Kind) IsAI() bool { return len(k) > 2 && k[:2] == "ai" }

// stepKeys lists the keys a step may start with, for error messages.
func stepKeys() []string {
	keys := make([]string, 0, len(aliases))
	for k := range aliases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// midsceneOptions are per-step options Midscene accepts that only matter to
// a model (or a browser); Apex accepts and ignores them so scripts parse
// unchanged.
var midsceneOptions = map[string]bool{
	"deepThink": true, "cacheable": true, "xpath": true, "images": true,
	"convertHttpImage2Base64": true, "domIncluded": true, "screenshotIncluded": true,
	"aiActionProgressTips": true, "deepLocate": true, "autoDismissKeyboard": true,
}
