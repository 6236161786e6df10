package lab

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
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
	var r toolResult
	if err := json.Unmarshal(c.call("tools/call", map[string]any{"name": name, "arguments": args}), &r); err != nil {
		c.t.Fatalf("tool %s: %v", name, err)
	}
	if r.IsError {
		c.t.Fatalf("tool %s failed: %+v", name, r.Content)
	}
	return r
}

// TestMobileMCP drives a simulated phone with @mobilenext/mobile-mcp (the
// real npm package, pinned in test/npm) through the real adb server.
func TestMobileMCP(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	server := filepath.Join(filepath.Dir(file), "..", "..", "test", "npm", "node_modules", "@mobilenext", "mobile-mcp", "lib", "index.js")
	if _, err := os.Stat(server); err != nil {
		t.Skip("mobile-mcp not installed (run `make deps-npm`, which runs npm ci in test/npm): skipping")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed: skipping the mobile-mcp test")
	}
	adb := adbdtest.Start(t)
	l := startLab(t, Options{})
	d := l.Devices()[0]
	adb.Connect(d.Addr)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, server)
	cmd.Env = append(withoutEnv(os.Environ(), "ANDROID_HOME", "ANDROID_ADB_SERVER_PORT"),
		"MOBILEMCP_LEGACY_ROBOT=1", "MOBILEMCP_DISABLE_TELEMETRY=1", adb.Env())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
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

	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	json.Unmarshal(c.call("tools/list", map[string]any{}), &tools)
	have := map[string]bool{}
	for _, tl := range tools.Tools {
		have[tl.Name] = true
	}
	for _, want := range []string{"mobile_list_available_devices", "mobile_list_elements_on_screen", "mobile_take_screenshot", "mobile_click_on_screen_at_coordinates"} {
		if !have[want] {
			t.Fatalf("tools/list lacks %s: %v", want, have)
		}
	}

	devs := c.tool("mobile_list_available_devices", map[string]any{})
	if len(devs.Content) == 0 || !strings.Contains(devs.Content[0].Text, `"id":"`+d.Serial+`"`) || !strings.Contains(devs.Content[0].Text, d.Phone.Props()["ro.product.model"]) {
		t.Fatalf("list devices = %+v; want %s with its model", devs.Content, d.Serial)
	}

	elems := c.tool("mobile_list_elements_on_screen", map[string]any{"device": d.Serial})
	text := elems.Content[0].Text
	m := regexp.MustCompile(`(?m)^.*"?Shop"?.*$`).FindString(text)
	if m == "" {
		t.Fatalf("elements on the home screen have no Shop icon:\n%s", text)
	}

	shot := c.tool("mobile_take_screenshot", map[string]any{"device": d.Serial})
	var img []byte
	for _, ct := range shot.Content {
		if ct.Type == "image" {
			img, _ = base64.StdEncoding.DecodeString(ct.Data)
		}
	}
	if len(img) == 0 {
		t.Fatalf("screenshot tool returned no image: %+v", shot.Content)
	}
	if cfg, err := png.DecodeConfig(strings.NewReader(string(img))); err == nil && (cfg.Width != 1080 || cfg.Height != 2400) {
		t.Fatalf("screenshot is %dx%d; want 1080x2400", cfg.Width, cfg.Height)
	}

	// Tap the Shop icon where the sim's own dump puts it; the app opens.
	tree := dump(t, adb, d.Serial)
	icon := find(tree.Root, "Shop")
	x, y := icon.Bounds.Center()
	c.tool("mobile_click_on_screen_at_coordinates", map[string]any{"device": d.Serial, "x": x, "y": y})
	if fg, _ := d.Phone.Foreground(); fg != "com.apex.shop" {
		t.Fatalf("after mobile-mcp tapped Shop at %d,%d the foreground app is %q", x, y, fg)
	}
	_ = fmt.Sprint
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
