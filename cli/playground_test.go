package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
)

func TestListenFromSkipsBusyPorts(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	ln, err := listenFrom("127.0.0.1", port, 50)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := ln.Addr().(*net.TCPAddr)
	if got.Port <= port || got.Port >= port+50 || !got.IP.IsLoopback() {
		t.Errorf("listenFrom(%d) = %v, want a later loopback port", port, got)
	}
	if _, err := listenFrom("127.0.0.1", port, 1); err == nil || !strings.Contains(err.Error(), "--port") {
		t.Errorf("only a busy port: %v, want an error naming --port", err)
	}
}

func getJSON(t *testing.T, method, url string, body any) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, url, bytes.NewReader(b))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp.StatusCode, m
}

// servePlayground runs apex playground until ctx ends and returns the URL
// it serves, once it listens, and where its result arrives.
func servePlayground(t *testing.T, ctx context.Context, env *Env, opts *PlaygroundOptions) (string, <-chan error) {
	t.Helper()
	urls := make(chan string, 1)
	opts.Serving = func(url string) { urls <- url }
	done := make(chan error, 1)
	go func() { done <- playgroundRun(ctx, env, opts) }()
	select {
	case url := <-urls:
		return url, done
	case err := <-done:
		t.Fatalf("playground ended: %v\n%s", err, env.Err)
		return "", nil
	}
}

func TestPlaygroundSim(t *testing.T) {
	var out, errOut bytes.Buffer
	env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(40*time.Second))
	defer cancel()
	var opened []string
	opts := &PlaygroundOptions{
		Device:  DeviceFlags{Sim: true},
		Port:    DefaultPlaygroundPort,
		Dir:     t.TempDir(),
		Config:  emptyFile(t),
		Getenv:  func(string) string { return "" },
		OpenURL: func(_ context.Context, url string) error { opened = append(opened, url); return nil },
	}
	url, done := servePlayground(t, ctx, env, opts)
	port, err := strconv.Atoi(strings.TrimSuffix(url[strings.LastIndex(url, ":")+1:], "/"))
	if !strings.HasPrefix(url, "http://127.0.0.1:") || err != nil || port < DefaultPlaygroundPort {
		t.Errorf("url %q: want 127.0.0.1 at port %d or later", url, DefaultPlaygroundPort)
	}

	// --sim opened the session at start.
	_, info := getJSON(t, "GET", url+"runtime-info", nil)
	if sess := info["session"].(map[string]any); sess["state"] != "ready" || info["platform"] != "android" {
		t.Fatalf("runtime-info = %v, want a ready android session", info)
	}
	var ts []map[string]any
	if resp, err := http.Get(url + "session/targets"); err != nil {
		t.Fatal(err)
	} else {
		err = json.NewDecoder(resp.Body).Decode(&ts)
		resp.Body.Close()
		if err != nil || len(ts) != 1 || ts[0]["id"] != simTargetID {
			t.Errorf("targets = %v (%v), want the simulated phone", ts, err)
		}
	}
	if code, m := getJSON(t, "POST", url+"interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Settings"}}); code != 200 || !strings.Contains(m["scene"].(string), "Network & internet") {
		t.Errorf("tap Settings: %d %v", code, m)
	}
	// A new session starts a new simulated phone.
	getJSON(t, "DELETE", url+"session", nil)
	if code, m := getJSON(t, "POST", url+"session", map[string]string{"deviceId": "emulator-5554"}); code != 400 || !strings.Contains(m["error"].(string), "without --sim") {
		t.Errorf("another device on a --sim playground: %d %v", code, m)
	}
	if code, m := getJSON(t, "POST", url+"session", map[string]string{"deviceId": simTargetID}); code != 200 || m["state"] != "ready" {
		t.Errorf("POST /session sim: %d %v", code, m)
	}
	code, m := getJSON(t, "POST", url+"execute", map[string]any{"goal": `tap "Settings", then check "Network & internet" exists`, "async": true})
	if code != 202 {
		t.Fatalf("execute: %d %v", code, m)
	}
	var v map[string]any
	patience.Poll(t, 30*time.Second, func() error {
		_, v = getJSON(t, "GET", url+"task-progress/"+m["requestId"].(string), nil)
		if v["status"] == "running" {
			return fmt.Errorf("the task still runs: %v", v)
		}
		return nil
	})
	if v["status"] != "done" {
		t.Errorf("task: %v", v)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("playground after Ctrl-C: %v", err)
	}
	if !strings.Contains(out.String(), "Apex playground: "+url) {
		t.Errorf("output %q lacks the URL", out.String())
	}
	if fmt.Sprint(opened) != fmt.Sprint([]string{url}) {
		t.Errorf("opened %v, want the URL once", opened)
	}
	if _, err := http.Get(url + "status"); err == nil {
		t.Errorf("the server still answers after the command ended")
	}
}

func TestPlaygroundCommandFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The command stops once it has printed its URL.
	env := &Env{Out: cancelOnWrite{&out, cancel}, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	cmd := newCmdPlayground(env)
	if f := cmd.Flags().Lookup("port"); f == nil || f.DefValue != strconv.Itoa(DefaultPlaygroundPort) {
		t.Fatalf("--port default: %v", f)
	}
	t.Setenv(RunsDirEnv, t.TempDir())
	cmd.SetArgs([]string{"--no-open", "--port", "0", "--config", emptyFile(t)})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "Apex playground: http://127.0.0.1:") {
		t.Errorf("output %q", out.String())
	}
}

type cancelOnWrite struct {
	w      io.Writer
	cancel func()
}

func (c cancelOnWrite) Write(b []byte) (int, error) {
	defer c.cancel()
	return c.w.Write(b)
}

func TestPlaygroundToken(t *testing.T) {
	noEnv := func(string) string { return "" }
	env := func(k string) string {
		if k == PlaygroundTokenEnv {
			return "from-env"
		}
		return ""
	}
	for _, tc := range []struct {
		name, host, flag string
		getenv           func(string) string
		want             string // "generated": a fresh random token
	}{
		{"loopback: none", "127.0.0.1", "", noEnv, ""},
		{"localhost: none", "localhost", "", noEnv, ""},
		{"IPv6 loopback: none", "::1", "", noEnv, ""},
		{"every interface: generated", "0.0.0.0", "", noEnv, "generated"},
		{"a LAN address: generated", "192.168.1.20", "", noEnv, "generated"},
		{"a host name: generated", "lab-mac.local", "", noEnv, "generated"},
		{"--token wins", "0.0.0.0", "given", env, "given"},
		{"the environment", "0.0.0.0", "", env, "from-env"},
		{"loopback with the environment", "127.0.0.1", "", env, "from-env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := playgroundToken(tc.host, tc.flag, tc.getenv)
			if tc.want != "generated" {
				if got != tc.want {
					t.Errorf("playgroundToken(%q, %q) = %q, want %q", tc.host, tc.flag, got, tc.want)
				}
				return
			}
			again := playgroundToken(tc.host, tc.flag, tc.getenv)
			if len(got) < 32 || got == again || url.QueryEscape(got) != got {
				t.Errorf("generated tokens %q, %q: want two different random URL-safe tokens of 32+ characters", got, again)
			}
		})
	}
}

func TestPlaygroundURL(t *testing.T) {
	for _, tc := range []struct {
		addr  *net.TCPAddr
		token string
		want  string
		any   bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5800}, "", "http://127.0.0.1:5800/", false},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5800}, "a b+/", "http://127.0.0.1:5800/?token=a+b%2B%2F", false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 5801}, "tok", "http://127.0.0.1:5801/?token=tok", true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 5802}, "tok", "http://127.0.0.1:5802/?token=tok", true},
		{&net.TCPAddr{IP: net.ParseIP("192.168.1.20"), Port: 5800}, "tok", "http://192.168.1.20:5800/?token=tok", false},
	} {
		got, anyIf := playgroundURL("http", tc.addr, tc.token)
		if got != tc.want || anyIf != tc.any {
			t.Errorf("playgroundURL(%v, %q) = %q, %v; want %q, %v", tc.addr, tc.token, got, anyIf, tc.want, tc.any)
		}
	}
}

// An address that is not this machine's is refused at once, naming --host.
func TestListenFromForeignHost(t *testing.T) {
	ln, err := listenFrom("192.0.2.1", DefaultPlaygroundPort, 50) // TEST-NET-1: never local
	if err == nil {
		ln.Close()
		t.Skip("192.0.2.1 is configured on this machine")
	}
	if !strings.Contains(err.Error(), "--host") || !strings.Contains(err.Error(), "192.0.2.1") {
		t.Errorf("listen on a foreign address: %v, want an error naming it and --host", err)
	}
}

// With a token (here from the environment, on loopback) the printed and
// opened URL carries it, it signs a browser in, and nothing gets in
// without it; the log never shows it.
func TestPlaygroundWithToken(t *testing.T) {
	const token = "pg-token-Hq81"
	var out, errOut, logs bytes.Buffer
	env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(40*time.Second))
	defer cancel()
	var opened []string
	opts := &PlaygroundOptions{
		Device: DeviceFlags{Sim: true},
		Host:   "127.0.0.1",
		Dir:    t.TempDir(),
		Config: emptyFile(t),
		Getenv: func(k string) string {
			if k == PlaygroundTokenEnv {
				return token
			}
			return ""
		},
		OpenURL: func(_ context.Context, url string) error { opened = append(opened, url); return nil },
	}
	signIn, done := servePlayground(t, ctx, env, opts)
	base, q, _ := strings.Cut(signIn, "?")
	if q != "token="+token || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("URL %q: want http://127.0.0.1:PORT/?token=%s", signIn, token)
	}
	if code, m := getJSON(t, "GET", base+"runtime-info", nil); code != 401 {
		t.Errorf("GET /runtime-info without the token: %d %v", code, m)
	}
	req, _ := http.NewRequest("GET", base+"runtime-info", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /runtime-info with the bearer token: %d", resp.StatusCode)
	}
	// A browser-like client that follows the printed URL lands on the page.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	req, _ = http.NewRequest("GET", signIn, nil)
	req.Header.Set("Accept", "text/html")
	resp, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.String() != base || !strings.Contains(string(page), "<title>Apex playground</title>") {
		t.Errorf("following %s: %d at %s\n%.300s", signIn, resp.StatusCode, resp.Request.URL, page)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("playground after Ctrl-C: %v", err)
	}
	if !strings.Contains(out.String(), "Apex playground: "+signIn+"\n") || fmt.Sprint(opened) != fmt.Sprint([]string{signIn}) {
		t.Errorf("printed %q and opened %v; want the URL with its token, once", out.String(), opened)
	}
	if strings.Contains(logs.String(), token) || strings.Contains(errOut.String(), token) {
		t.Errorf("the token is in the log:\n%s%s", logs.String(), errOut.String())
	}
}
