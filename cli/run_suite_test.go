package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const suiteDir = "../examples/suite"

// TestRunSuiteOnSim: the example suite, which uses every construct of
// scripts, passes on a simulated Android phone and iPhone, its data rows
// each a run and a JUnit testsuite, its call tree in the step names.
func TestRunSuiteOnSim(t *testing.T) {
	for _, platform := range []string{"android", "ios"} {
		t.Run(platform, func(t *testing.T) {
			dir := t.TempDir()
			junit, summary := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.json")
			out, errOut, err := run(t, "run", "--sim="+platform, "--concurrency", "2", "--ocr", "off", "--junit", junit, "--summary", summary, "--report-dir", filepath.Join(dir, "runs"), suiteDir)
			out += errOut // the progress lines are on stderr when stdout is not a terminal
			if err != nil {
				t.Fatalf("apex run: %v\n%s", err, out)
			}
			s := readSummary(t, summary)
			var got []string
			for _, sc := range s.Scripts {
				got = append(got, filepath.Base(sc.File)+":"+sc.Status+":"+string(rune('0'+sc.Row)))
			}
			want := []string{"sale-popup.yaml:passed:0", "sign-in.yaml:passed:1", "sign-in.yaml:passed:2", "sign-in.yaml:passed:3", "checkout.yaml:passed:0"}
			if !s.Passed || !slices.Equal(want, got) {
				t.Fatalf("scripts = %v, want %v\n%s", got, want, out)
			}
			j := readJUnit(t, junit)
			if len(j.Suites) != 5 || j.Failures+j.Errors != 0 || j.Suites[1].Name != "sign-in [row 1]" {
				t.Errorf("JUnit: %+v", j)
			}
			for _, line := range []string{
				"runFlow open-shop › open the shop › if: \"Summer Sale: 20% off\" shows → ",
				"runFlow search › search › tap: Pro Running Shoes",
				"repeat 2/2 › tap: {\"desc\":\"Increase quantity\"}",
				"repeat until: \"id:quantity\" reads \"1\" (check 3) → done",
				"if: platform is ios → " + map[string]string{"android": "else", "ios": "then"}[platform],
				"runFlow city › input: \"London\" into {\"id\":\"ship_city\"}",
				`assert: {"id":"order_summary"} textContains "total $125.99"`,
				`input: "wrong" into {"id":"password"}`,
			} {
				if !strings.Contains(out, line) {
					t.Errorf("no step %q in the output:\n%s", line, out)
				}
			}
		})
	}
}

// TestRunData: --data on a 3-row CSV yields 3 runs, 3 JUnit cases, and a
// failing row fails alone.
func TestRunData(t *testing.T) {
	dir := t.TempDir()
	rows := filepath.Join(dir, "rows.csv")
	os.WriteFile(rows, []byte("user,password,expect\ndemo,apex123,\"Welcome, demo!\"\ndemo,nope,Wrong username or password\nguest,apex123,\"Welcome, guest!\"\n"), 0o644)
	junit, summary := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.json")
	out, errOut, err := run(t, "run", "--sim", "--ocr", "off", "--data", rows, "--junit", junit, "--summary", summary, "--report-dir", filepath.Join(dir, "runs"), suiteDir+"/sign-in.yaml")
	out += errOut // progress is on stderr when stdout is not a terminal
	if err == nil || !strings.Contains(err.Error(), "1 of 3 scripts did not pass") {
		t.Fatalf("err = %v; want the third row to fail\n%s", err, out)
	}
	j := readJUnit(t, junit)
	if j.Tests != 3 || len(j.Suites) != 3 || j.Failures != 1 || j.Suites[2].Name != "sign-in [row 3]" || j.Suites[2].Cases[0].Failure == nil {
		t.Errorf("JUnit: %+v", j)
	}
	s := readSummary(t, summary)
	ids := map[string]bool{}
	for i, sc := range s.Scripts {
		ids[sc.RunID] = true
		if sc.Row != i+1 {
			t.Errorf("script %d is row %d", i, sc.Row)
		}
	}
	if len(ids) != 3 {
		t.Errorf("%d runs recorded, want 3", len(ids))
	}
	if !strings.Contains(out, `input: "guest" into {"id":"username"}`) || !strings.Contains(out, "FAIL "+suiteDir+"/sign-in.yaml [row 3]") {
		t.Errorf("output:\n%s", out)
	}
	mustFail(t, []string{"run", "--sim", "--data", filepath.Join(dir, "none.csv"), suiteDir + "/sign-in.yaml"}, "--data", "none.csv")
}

// TestRunTags: --tags runs the scripts with the tags (runner.Plan's tests
// cover the selection itself).
func TestRunTags(t *testing.T) {
	dir := t.TempDir()
	summary := filepath.Join(dir, "s.json")
	mustRun(t, "run", "--sim", "--ocr", "off", "--tags", "popup", "--summary", summary, "--report-dir", filepath.Join(dir, "runs"), suiteDir)
	if s := readSummary(t, summary); len(s.Scripts) != 1 || filepath.Base(s.Scripts[0].File) != "sale-popup.yaml" || !s.Passed {
		t.Errorf("summary = %+v; want sale-popup.yaml alone, passed", s)
	}
	mustFail(t, []string{"run", "--sim", "--tags", "nightly", suiteDir}, "no script of ../examples/suite has the tags")
	mustFail(t, []string{"run", "--sim", "--tags", "a b", suiteDir}, "--tags")
}
