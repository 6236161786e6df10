package check

import (
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/internal/scenetest"
	"github.com/apexagent/apex/scene"
)

func el(id, typ, text, desc string, y0 int, f scene.Flags) scene.Element {
	return scene.Element{ID: id, Type: typ, Text: text, Desc: desc, Bounds: scene.Rect{X0: 0, Y0: y0, X1: 1000, Y1: y0 + 100}, Flags: f, Source: "tree"}
}

// hand is a made-up screen with what the simulated apps lack: a disabled
// and a focused control, a switch on a row, repeated labels, a canvas.
var hand = &scene.Scene{Width: 1080, Height: 2400, Elements: []scene.Element{
	el("e1", "text", "Brightness 70%", "", 100, scene.Flags{}),
	el("e2", "button", "Pay", "", 300, scene.Flags{Clickable: true, Disabled: true}),
	el("e3", "input", "", "Card number", 500, scene.Flags{Clickable: true, Editable: true, Focused: true}),
	{ID: "e4", Type: "text", Text: "Wi-Fi", Bounds: scene.Rect{X0: 0, Y0: 700, X1: 800, Y1: 800}},
	{ID: "e5", Type: "switch", Desc: "", Bounds: scene.Rect{X0: 850, Y0: 700, X1: 1000, Y1: 800}, Flags: scene.Flags{Clickable: true, Checkable: true, Checked: true}},
	el("e6", "button", "Buy", "", 900, scene.Flags{Clickable: true}),
	el("e7", "button", "Buy", "", 1100, scene.Flags{Clickable: true}),
	el("e8", "button", "Buy", "", 1300, scene.Flags{Clickable: true}),
	el("e9", "image", "", "", 1500, scene.Flags{}),
	el("e10", "text", "Total $1,299.50", "", 1700, scene.Flags{}),
}}

func p(s string) action.Locator { return action.Locator{Prompt: s} }

func TestEval(t *testing.T) {
	login := scenetest.SimScene(t, "com.apex.login")
	settings := scenetest.SimScene(t, "com.android.settings")
	empty := &scene.Scene{Width: 1080, Height: 2400, Empty: true}
	yes, no := true, false
	tests := []struct {
		name    string
		s       *scene.Scene
		c       Check
		pass    bool
		quality float64
		actual  any // nil: not compared
	}{
		{"exact text", login, Check{Kind: Exists, Target: p("Sign in to continue")}, true, 1, true},
		{"contained", login, Check{Kind: Exists, Target: p("to continue")}, true, contained, true},
		{"ignoring case", login, Check{Kind: Exists, Target: p("welcome BACK")}, true, ignoringCase, true},
		{"loose words are no evidence", login, Check{Kind: Exists, Target: p("continue sign")}, false, 1, false},
		{"absent", login, Check{Kind: Exists, Target: p("Create account")}, false, 1, false},
		{"absent on a blind screen", empty, Check{Kind: Exists, Target: p("Create account")}, false, blindAbsence, false},
		{"several exact matches show", hand, Check{Kind: Exists, Target: p("Buy")}, true, 1, true},
		{"not exist", login, Check{Kind: NotExists, Target: p("Welcome, demo!")}, true, 1, false},
		{"not exist, loose words only", login, Check{Kind: NotExists, Target: p("continue sign")}, true, 1, false},
		{"not exist but there", login, Check{Kind: NotExists, Target: p("Remember me")}, false, 1, true},
		{"not exist but several there", hand, Check{Kind: NotExists, Target: p("Buy")}, false, 1, true},
		{"not exist on a blind screen", empty, Check{Kind: NotExists, Target: p("x")}, true, blindAbsence, false},
		{"text equals by resource name", login, Check{Kind: TextEquals, Target: p("heading"), Text: "Welcome back"}, true, 1, "Welcome back"},
		{"text equals by id", login, Check{Kind: TextEquals, Target: ParseTarget("id:com.apex.login:id/heading"), Text: "Welcome back"}, true, 1, "Welcome back"},
		{"text equals only ignoring case", login, Check{Kind: TextEquals, Target: action.Locator{ID: "com.apex.login:id/heading"}, Text: "welcome  back"}, true, looseText, "Welcome back"},
		{"text differs", login, Check{Kind: TextEquals, Target: action.Locator{ID: "heading"}, Text: "Hello"}, false, 1, "Welcome back"},
		{"text contains", login, Check{Kind: TextContains, Target: action.Locator{ID: "subheading"}, Text: "continue"}, true, 1, nil},
		{"text contains ignoring case", login, Check{Kind: TextContains, Target: action.Locator{ID: "subheading"}, Text: "CONTINUE"}, true, looseText, nil},
		{"text lacks", login, Check{Kind: TextContains, Target: action.Locator{ID: "subheading"}, Text: "goodbye"}, false, 1, nil},
		{"text of an ambiguous target is undecided", hand, Check{Kind: TextEquals, Target: p("Buy"), Text: "Buy"}, false, 0, nil},
		{"text of an absent target", login, Check{Kind: TextEquals, Target: p("Create account"), Text: "x"}, false, 1, nil},
		{"number after its label", hand, Check{Kind: NumberGreater, Target: p("Brightness"), Number: 60}, true, contained, 70.0},
		{"number less fails", hand, Check{Kind: NumberLess, Target: p("Brightness"), Number: 60}, false, contained, 70.0},
		{"number with separators", hand, Check{Kind: NumberLess, Target: p("Total"), Number: 1300}, true, contained, 1299.5},
		{"no number", login, Check{Kind: NumberGreater, Target: action.Locator{ID: "heading"}, Number: 1}, false, 1, "Welcome back"},
		{"unchecked", login, Check{Kind: NotChecked, Target: p("Remember me")}, true, 1, false},
		{"checked fails", login, Check{Kind: Checked, Target: p("Remember me")}, false, 1, false},
		{"a row's label is checked by its switch", hand, Check{Kind: Checked, Target: p("Wi-Fi")}, true, 1, true},
		{"enabled", hand, Check{Kind: Enabled, Target: p("Brightness 70%")}, true, 1, true},
		{"disabled", hand, Check{Kind: Enabled, Target: p("Pay")}, false, 1, false},
		{"focused", hand, Check{Kind: Focused, Target: p("Card number")}, true, 1, true},
		{"not focused", hand, Check{Kind: Focused, Target: p("Pay")}, false, 1, false},
		{"count", hand, Check{Kind: Count, Target: p("Buy"), Number: 3}, true, 1, 3},
		{"count differs", hand, Check{Kind: Count, Target: p("Buy"), Number: 2}, false, 1, 3},
		{"count one", hand, Check{Kind: Count, Target: p("Pay"), Number: 1}, true, 1, 1},
		{"count none", hand, Check{Kind: Count, Target: p("Refund"), Number: 0}, true, 1, 0},
		{"layout unchanged", login, Check{Kind: LayoutChanged}, false, 1, false},
		{"region header", login, Check{Kind: Region, Regions: []RegionText{{Name: "header", Text: "Sign in"}}}, true, 1, true},
		{"region bottom lacks", login, Check{Kind: Region, Regions: []RegionText{{Name: "bottom", Text: "Welcome back", MustExist: &yes}}}, false, 1, false},
		{"region must not", login, Check{Kind: Region, Regions: []RegionText{{Name: "top", Text: "Welcome, demo", MustExist: &no}}}, true, 1, true},
		{"region must equal", login, Check{Kind: Region, Regions: []RegionText{{Name: "top", Text: "Welcome", MustEqual: "Welcome back"}}}, true, 1, true},
		{"region of an element", settings, Check{Kind: Region, Regions: []RegionText{{Name: "Display · Dark theme, brightness", Text: "Display"}}}, true, 1, true},
		{"unknown region", login, Check{Kind: Region, Regions: []RegionText{{Name: "Nowhere at all", Text: "x"}}}, false, 1, nil},
		{"invalid check", login, Check{Kind: TextEquals}, false, 0, nil},
		{"no screen", nil, Check{Kind: Exists, Target: p("x")}, false, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.c.Eval(tt.s, tt.s)
			if r.Pass != tt.pass || r.Quality != tt.quality || r.Evidence == "" || strings.Contains(r.Evidence, "\n") {
				t.Fatalf("%s: %+v, want pass %v quality %v and one line of evidence", tt.c, r, tt.pass, tt.quality)
			}
			if tt.actual != nil && r.Actual != tt.actual {
				t.Errorf("actual %#v, want %#v", r.Actual, tt.actual)
			}
		})
	}
}

func TestEvalEvidence(t *testing.T) {
	tests := []struct {
		name string
		c    Check
		want []string
		elem string
	}{
		{"ambiguity lists the candidates", Check{Kind: TextEquals, Target: p("Buy"), Text: "Buy"}, []string{"e6", "e7", "e8", "index"}, ""},
		{"absence says what the screen shows", Check{Kind: Exists, Target: p("Refund")}, []string{`"Refund"`, "Brightness 70%"}, ""},
		{"the switch of a row", Check{Kind: Checked, Target: p("Wi-Fi")}, []string{"e5 switch", "checked"}, "e5"},
		{"a number", Check{Kind: NumberGreater, Target: p("Brightness"), Number: 80}, []string{"e1 shows 70 (want > 80)"}, "e1"},
		{"shown", Check{Kind: Exists, Target: p("Pay")}, []string{`e2 button "Pay"`}, "e2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.c.Eval(nil, hand)
			for _, w := range tt.want {
				if !strings.Contains(r.Evidence, w) {
					t.Errorf("evidence %q lacks %q", r.Evidence, w)
				}
			}
			switch {
			case tt.elem == "" && r.Element != nil:
				t.Errorf("element %s, want none", r.Element.ID)
			case tt.elem != "" && (r.Element == nil || r.Element.ID != tt.elem):
				t.Errorf("element %v, want %s", r.Element, tt.elem)
			}
		})
	}
}

func TestLayoutChanged(t *testing.T) {
	login := scenetest.SimScene(t, "com.apex.login")
	settings := scenetest.SimScene(t, "com.android.settings")
	c := Check{Kind: LayoutChanged}
	if r := c.Eval(login, settings); !r.Holds() || !strings.Contains(r.Evidence, "appeared") {
		t.Errorf("a new screen: %+v", r)
	}
	if r := c.Eval(login, login); r.Pass || r.Quality != 1 {
		t.Errorf("the same screen: %+v", r)
	}
	if r := c.Eval(nil, login); r.Pass || r.Quality != 0 {
		t.Errorf("no screen before: %+v, want undecided", r)
	}
}

func TestHolds(t *testing.T) {
	for _, tt := range []struct {
		r    Result
		want bool
	}{{Result{Pass: true, Quality: 1}, true}, {Result{Pass: true, Quality: Firm}, true},
		{Result{Pass: true, Quality: looseText}, false}, {Result{Quality: 1}, false}} {
		if got := tt.r.Holds(); got != tt.want {
			t.Errorf("%+v.Holds() = %v", tt.r, got)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		c    Check
		want string // "" = valid
	}{
		{"exists", Check{Kind: Exists, Target: p("x")}, ""},
		{"text needs a target", Check{Kind: TextEquals, Text: "x"}, "textEquals needs a target"},
		{"unknown kind lists the kinds", Check{Kind: "EXISTS_MAYBE"}, "exists, notExists, textEquals"},
		{"region needs regions", Check{Kind: Region}, "region needs regions"},
		{"region needs a name", Check{Kind: Region, Regions: []RegionText{{Text: "x"}}}, "needs a name"},
		{"region needs text", Check{Kind: Region, Regions: []RegionText{{Name: "top"}}}, "needs text"},
		{"layout needs nothing", Check{Kind: LayoutChanged}, ""},
		{"count is whole", Check{Kind: Count, Target: p("x"), Number: 1.5}, "whole number"},
		{"count has no index", Check{Kind: Count, Target: p("x").WithIndex(0), Number: 1}, "drop the target's index"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		c    Check
		want string
	}{
		{Check{Kind: Exists, Target: p("Cart")}, `"Cart" shows`},
		{Check{Kind: NotExists, Target: p("Sale")}, `"Sale" is gone`},
		{Check{Kind: TextEquals, Target: p("Total"), Text: "$5"}, `"Total" reads "$5"`},
		{Check{Kind: TextContains, Target: action.Locator{ID: "total"}, Text: "$"}, `"id:total" contains "$"`},
		{Check{Kind: NumberGreater, Target: p("Brightness"), Number: 60}, `"Brightness" is greater than 60`},
		{Check{Kind: Checked, Target: p("Wi-Fi")}, `"Wi-Fi" is checked`},
		{Check{Kind: Count, Target: p("Buy"), Number: 3}, `"Buy" shows 3 times`},
		{Check{Kind: Enabled, Target: p("Pay")}, `"Pay" can be used`},
		{Check{Kind: Focused, Target: p("Card number")}, `"Card number" is focused`},
		{Check{Kind: LayoutChanged}, "the screen changed"},
		{Check{Kind: Region, Regions: []RegionText{{Name: "header", Text: "Sign in"}}}, `"Sign in" is in the header`},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("String() = %s, want %s", got, tt.want)
		}
	}
}
