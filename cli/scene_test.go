package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apexagent/apex/scene"
)

func TestSceneCommand(t *testing.T) {
	example := filepath.Join("..", "examples", "shop-results.xml")
	out, _, err := run(t, "scene", example)
	if err != nil {
		t.Fatalf("apex scene: %v", err)
	}
	for _, want := range []string{"screen 1080x2400 app=com.apex.shop", `input "wireless earbuds"`, `button "Add to cart" id=add_to_cart`, "nodes in", "elements out", "bytes in", "bytes out"} {
		if !strings.Contains(out, want) {
			t.Errorf("apex scene output lacks %q:\n%s", want, out)
		}
	}

	out, _, err = run(t, "scene", "--budget", "600", example)
	if err != nil {
		t.Fatal(err)
	}
	text := out[:strings.Index(out, "-- ")]
	if len(text) > 600 || !strings.Contains(text, "dropped ") {
		t.Errorf("--budget 600 printed %d bytes of scene text, want ≤ 600 and a dropped line:\n%s", len(text), text)
	}

	out, _, err = run(t, "--json", "scene", example)
	if err != nil {
		t.Fatal(err)
	}
	var res []struct {
		File        string       `json:"file"`
		Fingerprint string       `json:"fingerprint"`
		Scene       *scene.Scene `json:"scene"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 || res[0].Scene == nil {
		t.Fatalf("--json output does not decode to one scene: %v\n%s", err, out)
	}
	s := res[0].Scene
	if s.Stats.NodesIn == 0 || s.Stats.ElementsOut != len(s.Elements) || s.Stats.BytesOut != len(s.Text()) || len(res[0].Fingerprint) != 32 {
		t.Errorf("json scene stats = %+v, fingerprint %q", s.Stats, res[0].Fingerprint)
	}
}

func TestSceneCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "page.html")
	if err := os.WriteFile(bad, []byte("<html><body/></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := run(t, "scene", bad, filepath.Join(dir, "missing.xml"))
	if err == nil {
		t.Fatal("apex scene on bad files succeeded")
	}
	if !strings.Contains(errOut, "not a uiautomator or XCUITest source") || !strings.Contains(errOut, "no such file") {
		t.Errorf("stderr = %q; want both causes named", errOut)
	}
	if _, _, err := run(t, "scene", "--budget", "0", bad); err == nil || !strings.Contains(err.Error(), "--budget") {
		t.Errorf("--budget 0 err = %v", err)
	}
	if _, _, err := run(t, "scene"); err == nil {
		t.Error("apex scene without files succeeded")
	}
}
