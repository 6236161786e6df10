package agent

import (
	"testing"

	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/internal/scenetest"
)

// TestJudge pins how a check's result becomes a verdict: its quality is
// the confidence, a loose match asks a person, and what cannot be decided
// fails without a review.
func TestJudge(t *testing.T) {
	login := scenetest.SimScene(t, "com.apex.login")
	tests := []struct {
		name   string
		c      check.Check
		pass   bool
		conf   float64
		review bool
	}{
		{"exact", check.Check{Kind: check.Exists, Target: check.ParseTarget("Sign in to continue")}, true, 1, false},
		{"contained", check.Check{Kind: check.Exists, Target: check.ParseTarget("to continue")}, true, 0.9, false},
		{"loose words are no evidence", check.Check{Kind: check.Exists, Target: check.ParseTarget("continue sign")}, false, 1, false},
		{"text equal only ignoring case", check.Check{Kind: check.TextEquals, Target: check.ParseTarget("id:com.apex.login:id/heading"), Text: "welcome  back"}, true, 0.7, true},
		{"text differs", check.Check{Kind: check.TextEquals, Target: check.ParseTarget("id:heading"), Text: "Hello"}, false, 1, false},
		{"unchecked", check.Check{Kind: check.NotChecked, Target: check.ParseTarget("Remember me")}, true, 1, false},
		{"no earlier screen", check.Check{Kind: check.LayoutChanged}, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judge(&tt.c, nil, login)
			if v.Pass != tt.pass || v.Confidence != tt.conf || v.Review != tt.review || v.Evidence == "" {
				t.Fatalf("%+v, want pass %v confidence %v review %v", v, tt.pass, tt.conf, tt.review)
			}
		})
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
