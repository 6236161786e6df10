package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// mcpClient speaks MCP (newline-delimited JSON-RPC over stdio) to a server
// process.
type mcpClient struct {
	t   *testing.T
	in  io.Writer
	out *bufio.Reader
	id  int
}

func (c *mcpClient) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.id++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if _, err := c.in.Write(append(req, '\n')); err != nil {
		c.t.Fatalf("MCP %s: write: %v", method, err)
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("MCP %s: read: %v", method, err)
		}
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &resp) != nil || resp.ID == nil || *resp.ID != c.id {
			continue // a notification or log line
		}
		if resp.Error != nil {
			c.t.Fatalf("MCP %s: error %s", method, resp.Error.Message)
		}
		return resp.Result
	}
}

func (c *mcpClient) notify(method string) {
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	c.in.Write(append(req, '\n'))
}

type toolResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func (c *mcpClient) tool(name string, args map[string]any) toolResult {
	c.t.Helper()
	r := c.try(name, args)
	if r.IsError {
		c.t.Fatalf("tool %s failed: %+v", name, r.Content)
	}
	return r
}

// try calls a tool and returns its result, error or not.
func (c *mcpClient) try(name string, args map[string]any) toolResult {
	c.t.Helper()
	var r toolResult
	if err := json.Unmarshal(c.call("tools/call", map[string]any{"name": name, "arguments": args}), &r); err != nil {
		c.t.Fatalf("tool %s: %v", name, err)
	}
	return r
}

func (r toolResult) text() string {
	var b strings.Builder
	for _, ct := range r.Content {
		b.WriteString(ct.Text)
	}
	return b.String()
}

// startMobileMCP starts @mobilenext/mobile-mcp (the real npm package,
// pinned in test/npm) on stdio against the adb server; legacy picks its
// plain-adb mode, otherwise it drives Android through mobilecli.
func startMobileMCP(t *testing.T, adb *adbdtest.ADB, legacy bool) *mcpClient {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	server := filepath.Join(filepath.Dir(file), "..", "..", "test", "npm", "node_modules", "@mobilenext", "mobile-mcp", "lib", "index.js")
	if _, err := os.Stat(server); err != nil {
		t.Skip("mobile-mcp not installed (run `make deps-npm`, which runs npm ci in test/npm): skipping")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed: skipping the mobile-mcp test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	cmd := exec.CommandContext(ctx, node, server)
	// mobile-mcp finds adb in $ANDROID_HOME/platform-tools.
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "platform-tools"), 0o755)
	os.Symlink(adb.Bin, filepath.Join(home, "platform-tools", "adb"))
	cmd.Env = append(withoutEnv(os.Environ(), "ANDROID_HOME", "ANDROID_ADB_SERVER_PORT", "MOBILEMCP_LEGACY_ROBOT"),
		"ANDROID_HOME="+home, "MOBILEMCP_DISABLE_TELEMETRY=1", "MOBILECLI_HOME="+t.TempDir(), adb.Env())
	if legacy {
		cmd.Env = append(cmd.Env, "MOBILEMCP_LEGACY_ROBOT=1")
	}
	cmd.WaitDelay = 5 * time.Second
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr lockedBuilder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("mobile-mcp stderr:\n%s", stderr.String())
		}
	})
	c := &mcpClient{t: t, in: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "apex-test", "version": "0"}})
	c.notify("notifications/initialized")
	return c
}

type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMobileMCP drives a simulated phone with every Android tool of
// @mobilenext/mobile-mcp, in its plain-adb (legacy) mode and in its default
// mode (mobilecli), through Google's adb.
func TestMobileMCP(t *testing.T) {
	for _, mode := range []struct {
		name   string
		legacy bool
	}{{"legacy", true}, {"default", false}} {
		t.Run(mode.name, func(t *testing.T) {
			adb := adbdtest.Start(t)
			l := startLab(t, Options{})
			d := l.Devices()[0]
			serial := adb.Connect(d.Addr)
			c := startMobileMCP(t, adb, mode.legacy)
			mobileMCPTools(t, c, adb, d, serial, mode.legacy)
		})
	}
}

// legacyUnsupported are the tools mobile-mcp itself refuses in its plain-adb
// mode ("… is not supported in legacy robot mode").
var legacyUnsupported = map[string]bool{"mobile_get_foreground_app": true, "mobile_clipboard": true, "mobile_get_device_logs": true}

// deviceServerTools need mobilecli's on-device server (started with
// app_process), which the simulated phone refuses: in the default mode
// mobilecli reports that it did not start.
var deviceServerTools = map[string]bool{"mobile_list_apps": true, "mobile_clipboard": true}

func mobileMCPTools(t *testing.T, c *mcpClient, adb *adbdtest.ADB, d *Device, serial string, legacy bool) {
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	json.Unmarshal(c.call("tools/list", map[string]any{}), &tools)
	have := map[string]bool{}
	for _, tl := range tools.Tools {
		have[tl.Name] = true
	}
	dev := map[string]any{"device": serial}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"device": serial}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	fg := func() string { p, _ := d.Phone.Foreground(); return p }
	center := func(text string) (int, int) {
		t.Helper()
		n := find(dump(t, adb, serial).Root, text)
		if n == nil {
			t.Errorf("no %q on screen (foreground %s)", text, fg())
			return 0, 0
		}
		return n.Bounds.Center()
	}
	apk := filepath.Join(t.TempDir(), "hello.apk")
	os.WriteFile(apk, adbdtest.APK(t, "com.example.hello", "Hello"), 0o644)
	shot := filepath.Join(t.TempDir(), "shot.png")

	tests := []struct {
		tool string
		args func() map[string]any
		// check looks at the result text and the phone; "" when all is well.
		check func(out string) string
	}{
		{"mobile_list_available_devices", func() map[string]any { return map[string]any{} }, func(out string) string {
			if !strings.Contains(out, serial) || !strings.Contains(out, d.Phone.Props()["ro.product.model"]) {
				return "the device and its model are not listed"
			}
			return ""
		}},
		{"mobile_get_screen_size", func() map[string]any { return dev }, func(out string) string {
			if !strings.Contains(out, "1080") || !strings.Contains(out, "2400") {
				return "want 1080x2400"
			}
			return ""
		}},
		{"mobile_list_apps", func() map[string]any { return dev }, func(out string) string {
			if !strings.Contains(out, "com.apex.shop") || !strings.Contains(out, "com.android.settings") {
				return "Shop and Settings are not listed"
			}
			return ""
		}},
		{"mobile_list_elements_on_screen", func() map[string]any { return dev }, func(out string) string {
			if !strings.Contains(out, "Shop") {
				return "the home screen's Shop icon is not listed"
			}
			return ""
		}},
		{"mobile_take_screenshot", func() map[string]any { return dev }, func(string) string { return "" }},
		{"mobile_save_screenshot", func() map[string]any { return with("saveTo", shot) }, func(string) string {
			f, err := os.Open(shot)
			if err != nil {
				return err.Error()
			}
			defer f.Close()
			if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width != 1080 {
				return fmt.Sprintf("saved screenshot: %v %v", cfg, err)
			}
			return ""
		}},
		{"mobile_click_on_screen_at_coordinates", func() map[string]any { x, y := center("Shop"); return with("x", x, "y", y) }, func(string) string {
			if fg() != "com.apex.shop" {
				return "tapping Shop opened " + fg()
			}
			return ""
		}},
		{"mobile_get_foreground_app", func() map[string]any { return dev }, func(out string) string {
			if !strings.Contains(out, "com.apex.shop") {
				return "Shop is on screen"
			}
			return ""
		}},
		{"mobile_swipe_on_screen", func() map[string]any { return with("direction", "up") }, func(string) string { return "" }},
		{"mobile_press_button", func() map[string]any { return with("button", "HOME") }, func(string) string {
			if fg() != "com.apex.launcher" {
				return "HOME left " + fg()
			}
			return ""
		}},
		{"mobile_launch_app", func() map[string]any { return with("packageName", "com.apex.login") }, func(string) string {
			if fg() != "com.apex.login" {
				return "launched " + fg()
			}
			return ""
		}},
		{"mobile_click_on_screen_at_coordinates", func() map[string]any { x, y := center("Username"); return with("x", x, "y", y) }, func(string) string { return "" }},
		{"mobile_type_keys", func() map[string]any { return with("text", "demo", "submit", false) }, func(string) string {
			if st, _ := d.Phone.State("com.apex.login"); st["username"] != "demo" {
				return fmt.Sprintf("typed %q", st["username"])
			}
			return ""
		}},
		{"mobile_double_tap_on_screen", func() map[string]any { x, y := center("Remember me"); return with("x", x, "y", y) }, func(string) string {
			if st, _ := d.Phone.State("com.apex.login"); st["remember"] != false {
				return "a double tap on a checkbox toggles it twice"
			}
			return ""
		}},
		{"mobile_long_press_on_screen_at_coordinates", func() map[string]any { x, y := center("Welcome back"); return with("x", x, "y", y) }, func(string) string { return "" }},
		{"mobile_terminate_app", func() map[string]any { return with("packageName", "com.apex.login") }, func(string) string {
			if d.Phone.AppStatus("com.apex.login").Running {
				return "Login still runs"
			}
			return ""
		}},
		{"mobile_open_url", func() map[string]any { return with("url", "https://example.com/mcp") }, func(string) string {
			if st, _ := d.Phone.State("com.android.browser"); fg() != "com.android.browser" || st["url"] != "https://example.com/mcp" {
				return fmt.Sprintf("open url: foreground %s, url %v", fg(), st["url"])
			}
			return ""
		}},
		{"mobile_get_orientation", func() map[string]any { return dev }, func(out string) string {
			if !strings.Contains(out, "portrait") {
				return "the phone starts in portrait"
			}
			return ""
		}},
		{"mobile_set_orientation", func() map[string]any { return with("orientation", "landscape") }, func(string) string {
			if d.Phone.Rotation()%2 != 1 {
				return "not landscape"
			}
			return ""
		}},
		{"mobile_get_orientation", func() map[string]any { return dev }, func(out string) string {
			if !strings.Contains(out, "landscape") {
				return "want landscape"
			}
			return ""
		}},
		{"mobile_set_orientation", func() map[string]any { return with("orientation", "portrait") }, func(string) string {
			if d.Phone.Rotation() != 0 {
				return "not portrait"
			}
			return ""
		}},
		{"mobile_clipboard", func() map[string]any { return with("text", "clip 中文") }, func(string) string { return "" }},
		{"mobile_clipboard", func() map[string]any { return dev }, func(out string) string {
			if !strings.Contains(out, "clip 中文") {
				return "the clipboard lost the text"
			}
			return ""
		}},
		{"mobile_install_app", func() map[string]any { return with("path", apk) }, func(string) string {
			if !d.Phone.AppStatus("com.example.hello").Installed {
				return "not installed"
			}
			return ""
		}},
		{"mobile_uninstall_app", func() map[string]any { return with("bundle_id", "com.example.hello") }, func(string) string {
			if d.Phone.AppStatus("com.example.hello").Installed {
				return "still installed"
			}
			return ""
		}},
		{"mobile_get_device_logs", func() map[string]any {
			go func() { shellOK(t, adb, serial, "am start -n com.apex.shop/.MainActivity") }()
			return with("limit", 1)
		}, func(out string) string {
			if !strings.Contains(out, "{") {
				return "no log entry"
			}
			return ""
		}},
		{"mobile_list_crashes", func() map[string]any { return dev }, func(string) string { return "" }},
		{"mobile_batch_commands", func() map[string]any {
			return with("steps", []any{map[string]any{"name": "mobile_press_button", "arguments": map[string]any{"button": "HOME"}}})
		}, func(string) string {
			if fg() != "com.apex.launcher" {
				return "the batch's HOME left " + fg()
			}
			return ""
		}},
	}
	for i, tc := range tests {
		if !have[tc.tool] {
			t.Errorf("mobile-mcp has no tool %s", tc.tool)
			continue
		}
		r := c.try(tc.tool, tc.args())
		if legacy && legacyUnsupported[tc.tool] {
			if !strings.Contains(r.text(), "not supported in legacy robot mode") {
				t.Errorf("#%d %s in legacy mode: %s; mobile-mcp refuses it there", i, tc.tool, r.text())
			}
			continue
		}
		if !legacy && deviceServerTools[tc.tool] {
			if !r.IsError || !strings.Contains(r.text(), "device server did not start") {
				t.Errorf("#%d %s in default mode: %s; want mobilecli's report that its device server did not start", i, tc.tool, r.text())
			}
			continue
		}
		if r.IsError {
			t.Errorf("#%d %s failed: %s", i, tc.tool, r.text())
			continue
		}
		if msg := tc.check(r.text()); msg != "" {
			t.Errorf("#%d %s: %s\n%.500s", i, tc.tool, msg, r.text())
		}
	}
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, e := range env {
		drop := false
		for _, n := range names {
			if strings.HasPrefix(e, n+"=") {
				drop = true
			}
		}
		if !drop {
			out = append(out, e)
		}
	}
	return out
}
