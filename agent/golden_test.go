package agent

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/scenetest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden prompts in testdata")

// TestPromptGolden pins what each role reads on the simulated Login
// screen: a change to a prompt shows up as a diff to review (-update
// rewrites the files).
func TestPromptGolden(t *testing.T) {
	sc := scenetest.SimScene(t, "com.apex.login")
	progress := `done 1: ok Input(value: "demo", locate: "Username")` + "\nleft: Tap(locate: \"the blue button\")"
	reqs := map[string]string{
		"planner":   promptText(plannerRequest("Sign in as demo with password apex123", sc, "", action.ForPlatform(device.Android))),
		"executor":  promptText(executorRequest(Step{ID: 2, Call: tapOn(action.Tap, "the blue button")}, "no element matches", "", sc, progress)),
		"validator": promptText(validatorRequest("the user is signed in", sc)),
		"query":     promptText(queryRequest("Is remember me ticked?", QueryBoolean, sc)),
	}
	for role, got := range reqs {
		file := filepath.Join("testdata", "prompt-"+role+".golden")
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if d := cmp.Diff(string(want), got); d != "" {
			t.Errorf("%s prompt changed (-want +got; -update to accept):\n%s", role, d)
		}
	}
}
