package agent

import (
	"testing"

	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim"
)

func simScene(t *testing.T, pkg string) *scene.Scene {
	t.Helper()
	p, err := sim.NewPhone(sim.Options{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Launch(pkg); err != nil {
		t.Fatal(err)
	}
	xml, err := p.DumpUI()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.FromSource(xml, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestCheckScene(t *testing.T) {
	login := simScene(t, "com.apex.login")
	settings := simScene(t, "com.apex.settings")
	yes, no := true, false
	tests := []struct {
		name string
		s    *scene.Scene
		c    Check
		pass bool
		conf float64
	}{
		{"exact text", login, Check{Kind: Exist, Target: "Sign in to continue"}, true, 1},
		{"contained", login, Check{Kind: Exist, Target: "to continue"}, true, 0.9},
		{"ignoring case", login, Check{Kind: Exist, Target: "welcome BACK"}, true, 0.95},
		{"loose words are no evidence", login, Check{Kind: Exist, Target: "continue sign"}, false, 1},
		{"absent", login, Check{Kind: Exist, Target: "Create account"}, false, 1},
		{"not exist", login, Check{Kind: NotExist, Target: "Welcome, demo!"}, true, 1},
		{"not exist but there", login, Check{Kind: NotExist, Target: "Remember me"}, false, 1},
		{"text equals by resource name", login, Check{Kind: TextEquals, Target: "heading", Value: "Welcome back"}, true, 1},
		{"text equals by id", login, Check{Kind: TextEquals, Target: "id:com.apex.login:id/heading", Value: "Welcome back"}, true, 1},
		{"text equals only ignoring case: review", login, Check{Kind: TextEquals, Target: "id:com.apex.login:id/heading", Value: "welcome  back"}, true, 0.7},
		{"text differs", login, Check{Kind: TextEquals, Target: "id:com.apex.login:id/heading", Value: "Hello"}, false, 1},
		{"text contains", login, Check{Kind: TextContains, Target: "id:com.apex.login:id/subheading", Value: "continue"}, true, 1},
		{"unchecked", login, Check{Kind: NotChecked, Target: "Remember me"}, true, 1},
		{"checked fails", login, Check{Kind: Checked, Target: "Remember me"}, false, 1},
		{"layout unchanged", login, Check{Kind: LayoutChanged}, false, 1},
		{"region header", login, Check{Kind: RegionCheck, Regions: []Region{{Name: "header", Text: "Sign in"}}}, true, 1},
		{"region bottom lacks", login, Check{Kind: RegionCheck, Regions: []Region{{Name: "bottom", Text: "Welcome back", MustExist: &yes}}}, false, 1},
		{"region must not", login, Check{Kind: RegionCheck, Regions: []Region{{Name: "top", Text: "Welcome, demo", MustExist: &no}}}, true, 1},
		{"region must equal", login, Check{Kind: RegionCheck, Regions: []Region{{Name: "top", Text: "Welcome", MustEqual: "Welcome back"}}}, true, 1},
		{"region of an element", settings, Check{Kind: RegionCheck, Regions: []Region{{Name: "Display · Dark theme, brightness", Text: "Display"}}}, true, 1},
		{"unknown region", login, Check{Kind: RegionCheck, Regions: []Region{{Name: "Nowhere at all", Text: "x"}}}, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := checkScene(&tt.c, tt.s, tt.s)
			if v.Pass != tt.pass || v.Confidence != tt.conf || v.Evidence == "" {
				t.Fatalf("%+v, want pass %v confidence %v", v, tt.pass, tt.conf)
			}
			if want := tt.conf >= ReviewLow && tt.conf < ReviewHigh; v.Review != want {
				t.Fatalf("review %v, want %v", v.Review, want)
			}
		})
	}
	// Numbers and layout changes between two screens.
	brightness := &scene.Scene{Width: 1080, Height: 2400, Elements: []scene.Element{{ID: "e1", Type: "text", Text: "Brightness 70%", Bounds: scene.Rect{X1: 100, Y1: 100}}}}
	for _, c := range []struct {
		c    Check
		pass bool
	}{{Check{Kind: NumericGreater, Target: "Brightness", Value: "60"}, true}, {Check{Kind: NumericLess, Target: "Brightness", Value: "60"}, false}} {
		if v := checkScene(&c.c, nil, brightness); v.Pass != c.pass {
			t.Errorf("%s: %+v", c.c.String(), v)
		}
	}
	if v := checkScene(&Check{Kind: LayoutChanged}, login, settings); !v.Pass {
		t.Errorf("layout change not seen: %+v", v)
	}
}

func TestLogSignals(t *testing.T) {
	lines := []string{
		"12-01 09:00:00.000  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main",
		"12-01 09:00:00.000  4242  4242 E AndroidRuntime: Process: com.apex.shop, PID: 4242",
		"12-01 09:00:00.000  4242  4242 E AndroidRuntime: java.lang.IllegalStateException: boom",
		"12-01 09:00:01.000  1000  1000 E ActivityManager: ANR in com.apex.notes (com.apex.notes/.NotesActivity)",
		"12-01 09:00:02.000  1000  1000 I ActivityManager: Start proc com.apex.login",
	}
	got := logSignals(lines)
	if len(got) != 2 || got[0].Kind != event.SigCrash || got[0].App != "com.apex.shop" || got[0].Detail != "java.lang.IllegalStateException: boom" ||
		got[1].Kind != event.SigANR || got[1].App != "com.apex.notes" {
		t.Fatalf("%+v", got)
	}
	if _, kb := splitTrace("a\nb\n__APEX_IME__\n  mInputShown=true\n"); !kb {
		t.Fatal("keyboard not seen")
	}
}
