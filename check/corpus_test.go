package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/scene"
)

// corpusScene builds the Scene of a real UI dump from the shared corpus
// (shared/corpus next to the checkout or above it), or skips the test
// when the corpus is absent.
func corpusScene(t *testing.T, name string) *scene.Scene {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "shared", "corpus", name))
		if err == nil {
			s, err := scene.FromSource(b, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return s
		}
		if filepath.Dir(d) == d {
			t.Skipf("corpus: no shared/corpus/%s above %s (the shared corpus of real UI dumps sits next to the checkout); skipping", name, dir)
		}
	}
}

// TestEvalCorpus decides checks on real apps' screens.
func TestEvalCorpus(t *testing.T) {
	tests := []struct {
		name    string
		dump    string
		c       Check
		pass    bool
		quality float64
	}{
		{"ebay: the sign-in button shows", "android/007_ebay-sign-in-form.xml", Check{Kind: Exists, Target: p("Sign in")}, true, 1},
		{"ebay: the tab and the button read sign in, ignoring case", "android/007_ebay-sign-in-form.xml", Check{Kind: Exists, Target: p("sign in")}, true, ignoringCase},
		{"ebay: which sign in is undecided", "android/007_ebay-sign-in-form.xml", Check{Kind: TextEquals, Target: p("sign in"), Text: "Sign in"}, false, 0},
		{"ebay: the user field's hint", "android/007_ebay-sign-in-form.xml", Check{Kind: TextEquals, Target: action.Locator{ID: "sign_in_username_entry"}, Text: "Email or user ID"}, true, 1},
		{"ebay: the user field has focus", "android/007_ebay-sign-in-form.xml", Check{Kind: Focused, Target: action.Locator{ID: "sign_in_username_entry"}}, true, 1},
		{"ebay: the password field has not", "android/007_ebay-sign-in-form.xml", Check{Kind: Focused, Target: action.Locator{ID: "sign_in_password_entry"}}, false, 1},
		{"ebay: show password is off", "android/007_ebay-sign-in-form.xml", Check{Kind: NotChecked, Target: p("Show")}, true, 1},
		{"ebay: sign in can be used", "android/007_ebay-sign-in-form.xml", Check{Kind: Enabled, Target: action.Locator{ID: "sign_in_button"}}, true, 1},
		{"ebay: no welcome yet", "android/007_ebay-sign-in-form.xml", Check{Kind: NotExists, Target: p("Welcome")}, true, 1},
		{"wechat: eight contacts", "android/017_wechat-contacts-list.xml", Check{Kind: Count, Target: action.Locator{ID: "ol"}}, false, 1},
		{"wechat: eight contacts by id", "android/017_wechat-contacts-list.xml", Check{Kind: Count, Target: action.Locator{ID: "ol"}, Number: 8}, true, 1},
		{"wechat: a contact group shows", "android/017_wechat-contacts-list.xml", Check{Kind: Exists, Target: p("北极星")}, true, contained},
		{"wechat: contacts tab", "android/017_wechat-contacts-list.xml", Check{Kind: TextEquals, Target: action.Locator{ID: "ll"}, Text: "通讯录"}, true, 1},
		{"ios settings: General in the top half", "ios/005_ios-settings-top-shirates.xml", Check{Kind: Region, Regions: []RegionText{{Name: "top", Text: "General"}}}, true, 1},
		{"ios settings: Game Center not in the header", "ios/005_ios-settings-top-shirates.xml", Check{Kind: Region, Regions: []RegionText{{Name: "header", Text: "Game Center"}}}, false, 1},
		{"ios settings: the title", "ios/005_ios-settings-top-shirates.xml", Check{Kind: TextEquals, Target: p("Settings"), Text: "Settings"}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := corpusScene(t, tt.dump)
			r := tt.c.Eval(nil, s)
			if r.Pass != tt.pass || r.Quality != tt.quality {
				t.Fatalf("%s: %+v, want pass %v quality %v", tt.c, r, tt.pass, tt.quality)
			}
		})
	}
}
