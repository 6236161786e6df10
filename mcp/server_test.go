package mcp_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/mcp"
	"github.com/apexagent/apex/sim/adbd/adbdtest"
	"github.com/apexagent/apex/sim/lab"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestPolicyLimitsTools(t *testing.T) {
	_, hosts := simHosts(t, 1)
	for _, tc := range []struct {
		policy       mcp.Policy
		want, absent []string
	}{
		{mcp.ReadOnly, []string{"device_list", "device_open", "device_close", "device_screenshot", "observe", "scene_diff"}, []string{"tap", "act", "assert", "query", "shell", "app_install"}},
		{mcp.Standard, []string{"observe", "tap", "double_tap", "keyboard_press", "back", "app_switcher", "act", "assert", "query"}, []string{"shell", "app_install"}},
		{mcp.Full, []string{"tap", "act", "shell", "app_install"}, nil},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			c := connect(t, newServer(t, &mcp.Options{Hosts: hosts, Policy: tc.policy}))
			names := c.toolNames()
			for _, n := range tc.want {
				if !slices.Contains(names, n) {
					t.Errorf("policy %s lacks %s: %v", tc.policy, n, names)
				}
			}
			for _, n := range tc.absent {
				if slices.Contains(names, n) {
					t.Errorf("policy %s offers %s", tc.policy, n)
				}
			}
		})
	}
	if _, err := mcp.New(&mcp.Options{Policy: "root"}); err == nil || !strings.Contains(err.Error(), "readonly, standard or full") {
		t.Errorf("bad policy: %v", err)
	}
}

func TestEveryToolTakesDevice(t *testing.T) {
	_, hosts := simHosts(t, 1)
	c := connect(t, newServer(t, &mcp.Options{Hosts: hosts, Policy: mcp.Full}))
	r, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range r.Tools {
		sc := schemaOf(t, tl)
		props, _ := sc["properties"].(map[string]any)
		if _, ok := props["device"]; !ok {
			t.Errorf("%s has no device param: %v", tl.Name, sc)
		}
		req, _ := sc["required"].([]any)
		if tl.Name != "device_list" && !slices.Contains(req, any("device")) {
			t.Errorf("%s does not require device: %v", tl.Name, req)
		}
	}
}

func TestActionToolSchema(t *testing.T) {
	_, hosts := simHosts(t, 1)
	c := connect(t, newServer(t, &mcp.Options{Hosts: hosts}))
	tap := c.tool("tap")
	if !strings.Contains(tap.Description, "Tap an element once.") || !strings.Contains(tap.Description, `"e7"`) {
		t.Errorf("tap description: %q", tap.Description)
	}
	sc := schemaOf(t, tap)
	props := sc["properties"].(map[string]any)
	locate := props["locate"].(map[string]any)
	if !strings.Contains(locate["description"].(string), "the element to tap") {
		t.Errorf("locate param: %v", locate)
	}
	if got := sc["required"]; !slices.Equal(got.([]any), []any{"device", "locate"}) {
		t.Errorf("required = %v", got)
	}
	if recents := c.tool("recent_apps"); !strings.Contains(recents.Description, "Only on android devices") {
		t.Errorf("recent_apps description: %q", recents.Description)
	}
	if back := c.tool("back"); strings.Contains(back.Description, "Only on") {
		t.Errorf("back is on both platforms; description: %q", back.Description)
	}
}

func TestDeviceFlow(t *testing.T) {
	l, hosts := simHosts(t, 1)
	id := simID(l, 0)
	c := connect(t, newServer(t, &mcp.Options{Hosts: hosts}))

	list := c.ok("device_list", nil)
	if !strings.Contains(list, id) || !strings.Contains(list, "free") {
		t.Fatalf("device_list:\n%s", list)
	}
	if msg := c.fails("observe", map[string]any{"device": id}); !strings.Contains(msg, "call device_open first") {
		t.Errorf("observe before open: %s", msg)
	}
	open := c.ok("device_open", map[string]any{"device": id})
	if !strings.Contains(open, "opened "+id) || !strings.Contains(open, "tap") {
		t.Errorf("device_open: %s", open)
	}
	if list := c.ok("device_list", nil); !strings.Contains(list, "open in this session") {
		t.Errorf("device_list after open:\n%s", list)
	}

	scene := c.ok("observe", map[string]any{"device": id})
	shop := regexp.MustCompile(`(e\d+) item "Shop"`).FindStringSubmatch(scene)
	if shop == nil {
		t.Fatalf("no Shop icon on the launcher:\n%s", scene)
	}
	done := c.ok("tap", map[string]any{"device": id, "locate": shop[1]})
	if !strings.Contains(done, `"Shop"`) {
		t.Errorf("tap result does not say what it tapped: %s", done)
	}
	if app, _ := l.Devices()[0].Phone.Foreground(); app != "com.apex.shop" {
		t.Errorf("after tapping %s the foreground app is %q", shop[1], app)
	}
	diff := c.ok("scene_diff", map[string]any{"device": id})
	if !strings.Contains(diff, "app=com.apex.shop") || !strings.Contains(diff, "- item \"Shop\"") {
		t.Errorf("scene_diff:\n%s", diff)
	}
	if diff := c.ok("scene_diff", map[string]any{"device": id}); !strings.Contains(diff, "no change") {
		t.Errorf("second scene_diff:\n%s", diff)
	}

	// Text and descriptions work too, on a fresh observation.
	c.ok("back", map[string]any{"device": id})
	c.ok("tap", map[string]any{"device": id, "locate": map[string]any{"text": "Settings"}})
	if app, _ := l.Devices()[0].Phone.Foreground(); app != "com.android.settings" {
		t.Errorf("after tapping Settings the foreground app is %q", app)
	}

	// Bad params come back as a tool error naming the field.
	if msg := c.fails("tap", map[string]any{"device": id}); !strings.Contains(msg, "locate") {
		t.Errorf("tap without locate: %s", msg)
	}

	c.ok("device_close", map[string]any{"device": id})
	if msg := c.fails("observe", map[string]any{"device": id}); !strings.Contains(msg, "not open in this session") {
		t.Errorf("observe after close: %s", msg)
	}
}

func TestStaleElementID(t *testing.T) {
	l, id, c := openSim(t, mcp.Options{})
	if msg := c.fails("tap", map[string]any{"device": id, "locate": "e3"}); !strings.Contains(msg, "call observe") {
		t.Errorf("id before any observation: %s", msg)
	}
	c.ok("observe", map[string]any{"device": id})
	c.ok("launch", map[string]any{"device": id, "app": "com.apex.notes"})
	msg := c.fails("tap", map[string]any{"device": id, "locate": map[string]any{"id": "e3"}})
	if !strings.Contains(msg, "e3 of the last observation is no longer on screen") {
		t.Errorf("stale id: %s", msg)
	}
	if app, _ := l.Devices()[0].Phone.Foreground(); app != "com.apex.notes" {
		t.Errorf("a stale id tapped something: foreground is %q", app)
	}
	// A miss lists the screen's elements by id; they are not the last
	// observation's, and the error says so.
	if msg := c.fails("tap", map[string]any{"device": id, "locate": "nothing like this"}); !strings.Contains(msg, "call observe before using them") {
		t.Errorf("a miss on a changed screen: %s", msg)
	}
}

func TestObserveBudgetAndScreenshot(t *testing.T) {
	_, id, c := openSim(t, mcp.Options{})
	small := c.ok("observe", map[string]any{"device": id, "budget": 200})
	if len(small) > 200 {
		t.Errorf("observe with budget 200 returned %d bytes", len(small))
	}
	if msg := c.fails("observe", map[string]any{"device": id, "budget": -1}); !strings.Contains(msg, "budget") {
		t.Errorf("negative budget: %s", msg)
	}

	for _, tc := range []struct {
		args    map[string]any
		long    int
		caption string
	}{
		{map[string]any{"device": id}, mcp.DefaultImageSize, "scaled from 1080x2400"},
	} {
		r := c.call("device_screenshot", tc.args)
		if r.IsError {
			t.Fatalf("device_screenshot: %s", textOf(r))
		}
		img := imageOf(t, r)
		b := img.Bounds()
		if got := max(b.Dx(), b.Dy()); got != tc.long {
			t.Errorf("device_screenshot(%v): long side %d, want %d", tc.args, got, tc.long)
		}
		if !strings.Contains(textOf(r), tc.caption) {
			t.Errorf("caption %q lacks %q", textOf(r), tc.caption)
		}
	}
	r := c.call("observe", map[string]any{"device": id, "screenshot": true, "maxSize": 512})
	if img := imageOf(t, r); img.Bounds().Dy() != 512 {
		t.Errorf("observe screenshot is %v", img.Bounds())
	}
	if msg := c.fails("device_screenshot", map[string]any{"device": id, "maxSize": 99999}); !strings.Contains(msg, "maxSize") {
		t.Errorf("huge maxSize: %s", msg)
	}
}

func imageOf(t *testing.T, r *sdk.CallToolResult) image.Image {
	t.Helper()
	for _, c := range r.Content {
		if ic, ok := c.(*sdk.ImageContent); ok {
			if ic.MIMEType != "image/png" {
				t.Fatalf("image type %s", ic.MIMEType)
			}
			img, err := png.Decode(bytes.NewReader(ic.Data))
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no image in %v", r.Content)
	return nil
}

func TestAIToolsWithoutRuntime(t *testing.T) {
	_, id, c := openSim(t, mcp.Options{})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"act", map[string]any{"device": id, "goal": "open the shop"}},
		{"assert", map[string]any{"device": id, "assertion": "the launcher is shown"}},
		{"query", map[string]any{"device": id, "question": "how many apps are there", "kind": "number"}},
	} {
		if msg := c.fails(tc.tool, tc.args); !strings.Contains(msg, "no AI runtime") {
			t.Errorf("%s without AI: %s", tc.tool, msg)
		}
	}
}

// fakeAI answers from the device it is given, to prove the server passes
// the leased device and its space.
type fakeAI struct{}

func (fakeAI) Act(ctx context.Context, t agent.Task) (*agent.Result, error) {
	if t.Goal != "open the shop" {
		return nil, errors.New("unknown goal")
	}
	if t.Space == nil || t.Space.Platform() != "android" {
		return nil, errors.New("no android space")
	}
	return &agent.Result{Status: "done", Summary: "opened on " + t.DeviceID, Steps: []agent.StepResult{{ID: 1}}}, t.Driver.LaunchApp(ctx, "com.apex.shop")
}

func (fakeAI) Assert(ctx context.Context, t agent.Task) (*agent.Verdict, error) {
	app, err := t.Driver.ForegroundApp(ctx)
	return &agent.Verdict{Pass: app == "com.apex.shop", Confidence: 1, Evidence: "foreground " + app}, err
}

func (fakeAI) Query(ctx context.Context, t agent.Task, kind string) (any, error) {
	return kind, nil
}

func (fakeAI) Offline() bool { return true }

func TestAITools(t *testing.T) {
	l, hosts := simHosts(t, 1)
	id := simID(l, 0)
	c := connect(t, newServer(t, &mcp.Options{Hosts: hosts, AI: fakeAI{}}))
	c.ok("device_open", map[string]any{"device": id})
	if out := c.ok("act", map[string]any{"device": id, "goal": "open the shop"}); !strings.Contains(out, `"summary": "opened on `+id) {
		t.Errorf("act: %s", out)
	}
	if out := c.ok("assert", map[string]any{"device": id, "assertion": "the shop is open"}); !strings.Contains(out, `"pass": true`) {
		t.Errorf("assert: %s", out)
	}
	if out := c.ok("query", map[string]any{"device": id, "question": "is it on", "kind": "boolean"}); !strings.Contains(out, `"answer": "boolean"`) {
		t.Errorf("query: %s", out)
	}
	if msg := c.fails("act", map[string]any{"device": id, "goal": " "}); !strings.Contains(msg, "goal is required") {
		t.Errorf("empty goal: %s", msg)
	}
}

func TestShellNeedsFullPolicy(t *testing.T) {
	l, id, c := openSim(t, mcp.Options{Policy: mcp.Full})
	out := c.ok("shell", map[string]any{"device": id, "command": "getprop ro.product.model"})
	if want := l.Devices()[0].Phone.Props()["ro.product.model"]; strings.TrimSpace(out) != want {
		t.Errorf("shell getprop: %q, want %q", out, want)
	}
	if msg := c.fails("app_install", map[string]any{"device": id, "path": "/nonexistent.apk"}); !strings.Contains(msg, "no such file") {
		t.Errorf("install of a missing file: %s", msg)
	}
	apk := filepath.Join(t.TempDir(), "hello world.apk")
	if err := os.WriteFile(apk, adbdtest.APK(t, "org.example.hello", "Hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("app_install", map[string]any{"device": id, "path": apk}); !strings.Contains(out, "installed "+apk) {
		t.Errorf("app_install: %q", out)
	}
	if out := c.ok("shell", map[string]any{"device": id, "command": "pm list packages; ls /data/local/tmp"}); !strings.Contains(out, "package:org.example.hello\n") || strings.Contains(out, "apex-") {
		t.Errorf("after app_install, the package is not listed or the copy is left behind:\n%s", out)
	}
}

// TestIDAfterUnrelatedChange: an id stays usable while its element is
// unchanged, even if other elements changed; the changed one is refused.
func TestIDAfterUnrelatedChange(t *testing.T) {
	_, id, c := openSim(t, mcp.Options{})
	c.ok("launch", map[string]any{"device": id, "app": "com.apex.login"})
	scene := c.ok("observe", map[string]any{"device": id})
	user := regexp.MustCompile(`(e\d+) input "Username"`).FindStringSubmatch(scene)
	remember := regexp.MustCompile(`(e\d+) checkbox "Remember me".* unchecked`).FindStringSubmatch(scene)
	if user == nil || remember == nil {
		t.Fatalf("login screen changed; update the test:\n%s", scene)
	}
	c.ok("input", map[string]any{"device": id, "locate": user[1], "value": "ann"})
	c.ok("tap", map[string]any{"device": id, "locate": remember[1]})
	if now := c.ok("observe", map[string]any{"device": id}); !strings.Contains(now, `"Remember me"`) || strings.Contains(now, "unchecked") || !strings.Contains(now, `"ann"`) {
		t.Errorf("after typing and ticking by id:\n%s", now)
	}
	c.ok("observe", map[string]any{"device": id})
	c.ok("input", map[string]any{"device": id, "locate": map[string]any{"text": "ann"}, "value": "bob"})
	if msg := c.fails("input", map[string]any{"device": id, "locate": user[1], "value": "cy"}); !strings.Contains(msg, "no longer on screen") {
		t.Errorf("the changed field by its old id: %s", msg)
	}
}

// TestObserveSeesPixels: the Arcade's board draws its Start game button
// only in pixels; observe reads it with OCR, and tapping it by its id or
// its text starts a game.
func TestObserveSeesPixels(t *testing.T) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("tesseract is not installed (make deps-apt installs it)")
	}
	l, hosts := simHostsWith(t, lab.Options{Android: 1, AppFiles: []string{"../examples/apps/arcade.yaml"}})
	id := simID(l, 0)
	c := connect(t, newServer(t, &mcp.Options{Hosts: hosts}))
	c.ok("device_open", map[string]any{"device": id})
	c.ok("launch", map[string]any{"device": id, "app": "com.apex.arcade"})
	c.ok("tap", map[string]any{"device": id, "locate": "Play"})
	board := c.ok("observe", map[string]any{"device": id})
	button := regexp.MustCompile(`(e\d+) \w+ "Start game"`).FindStringSubmatch(board)
	if button == nil {
		t.Fatalf("observe of the canvas board has no Start game:\n%s", board)
	}
	c.ok("tap", map[string]any{"device": id, "locate": button[1]})
	if st, err := l.Devices()[0].Phone.State("com.apex.arcade"); err != nil || (st["games"] != 1.0 && st["games"] != 1) {
		t.Errorf("games = %v (%v): tapping %s did not start a game", st["games"], err, button[1])
	}
}
