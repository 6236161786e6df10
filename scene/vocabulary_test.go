package scene

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/apexagent/apex/sim"
	"github.com/google/go-cmp/cmp"
)

// simSource launches pkg on a simulated phone of platform and returns its
// UI source: a uiautomator dump on Android, the XCUITest tree on iOS.
func simSource(t *testing.T, platform, pkg string) []byte {
	t.Helper()
	p, err := sim.NewPhone(sim.Options{Platform: platform, Seed: 2, Clock: fixedClock{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Launch(pkg); err != nil {
		t.Fatal(err)
	}
	if platform == sim.PlatformIOS {
		return p.SourceXCUI()
	}
	xml, err := p.DumpUI()
	if err != nil {
		t.Fatal(err)
	}
	return xml
}

// fixedClock keeps the status bar's clock still, for goldens.
type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 1, 2, 9, 41, 0, 0, time.UTC) }

var (
	// classNames betray a platform class in text a model reads.
	classNames = regexp.MustCompile(`android\.(widget|view|webkit)\.|androidx\.|XCUIElementType`)
	typeToken  = regexp.MustCompile(`(?m)^e\d+ (\S+)`)
)

// leak returns what in text a model reads is not of the vocabulary: a
// platform class name, or an element line whose type is not one of Types.
func leak(text string) string {
	if m := classNames.FindString(text); m != "" {
		return m
	}
	for _, m := range typeToken.FindAllStringSubmatch(text, -1) {
		if !KnownType(m[1]) {
			return m[0]
		}
	}
	return ""
}

// TestOneVocabulary renders the built-in apps' first screens on both
// platforms: every element's type is one of Types, the text a model reads
// names no platform class (the JSON keeps it, in class), and an element
// both platforms show under the same text has the same type on both
// (where iOS has the kind at all: its checkboxes are switches). The
// Login screen's text on each platform is a golden.
func TestOneVocabulary(t *testing.T) {
	for _, pkg := range []string{"com.apex.login", "com.apex.settings", "com.apex.shop", "com.apex.notes", "com.apex.zhongwen"} {
		t.Run(pkg, func(t *testing.T) {
			byText := map[string]map[string]string{} // platform → text → type
			for _, platform := range []string{sim.PlatformAndroid, sim.PlatformIOS} {
				s, err := FromSource(simSource(t, platform, pkg), nil)
				if err != nil {
					t.Fatal(err)
				}
				byText[platform] = map[string]string{}
				classes := 0
				for _, e := range s.Elements {
					if !KnownType(e.Type) {
						t.Errorf("%s: %s has type %q, not one of %v", platform, e.ID, e.Type, Types)
					}
					if e.Class != "" {
						classes++
					}
					if !e.System && e.Part == "" && e.Text != "" {
						byText[platform][e.Text] = e.Type
					}
				}
				text := s.Text()
				if m := leak(text); m != "" {
					t.Errorf("%s: the text a model reads names %q, not the vocabulary:\n%s", platform, m, text)
				}
				if classes == 0 {
					t.Errorf("%s: no element keeps its platform class for debugging", platform)
				}
				if pkg == "com.apex.login" {
					golden(t, filepath.Join("testdata", "golden", "sim-login-"+platform+".txt"), text)
				}
			}
			same := 0
			for text, android := range byText[sim.PlatformAndroid] {
				ios, ok := byText[sim.PlatformIOS][text]
				if !ok {
					continue
				}
				same++
				// iOS has no checkbox class: its checkboxes are switches.
				if ios != android && !(android == TypeCheckbox && ios == TypeSwitch) {
					t.Errorf("%q is a %s on Android but a %s on iOS", text, android, ios)
				}
			}
			if same < 2 {
				t.Errorf("only %d texts on both platforms; the comparison proves nothing", same)
			}
		})
	}
}

// golden compares got with the file, or rewrites it with -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./scene -run %s -update to create it)", err, t.Name())
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", file, d)
	}
}
