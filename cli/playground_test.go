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
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestListenFromSkipsBusyPorts(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	ln, err := listenFrom(port, 50)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := ln.Addr().(*net.TCPAddr)
	if got.Port <= port || got.Port >= port+50 || !got.IP.IsLoopback() {
		t.Errorf("listenFrom(%d) = %v, want a later loopback port", port, got)
	}
	if _, err := listenFrom(port, 1); err == nil || !strings.Contains(err.Error(), "--port") {
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

func TestPlaygroundSim(t *testing.T) {
	var out, errOut bytes.Buffer
	env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	urls := make(chan string, 1)
	var opened []string
	opts := &PlaygroundOptions{
		Device:  DeviceFlags{Sim: true},
		Port:    DefaultPlaygroundPort,
		Dir:     t.TempDir(),
		Config:  "testdata-none.yaml",
		Getenv:  func(string) string { return "" },
		OpenURL: func(_ context.Context, url string) error { opened = append(opened, url); return nil },
		Serving: func(url string) { urls <- url },
	}
	done := make(chan error, 1)
	go func() { done <- playgroundRun(ctx, env, opts) }()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("playground ended: %v\n%s", err, errOut.String())
	}
	port, err := strconv.Atoi(strings.TrimSuffix(url[strings.LastIndex(url, ":")+1:], "/"))
	if !strings.HasPrefix(url, "http://127.0.0.1:") || err != nil || port < DefaultPlaygroundPort {
		t.Errorf("url %q: want 127.0.0.1 at port %d or later", url, DefaultPlaygroundPort)
	}

	// --sim opened the session at start.
	_, info := getJSON(t, "GET", url+"runtime-info", nil)
	if sess := info["session"].(map[string]any); sess["state"] != "ready" || info["platform"] != "android" {
		t.Fatalf("runtime-info = %v, want a ready android session", info)
	}
	_, ts := getJSON(t, "GET", url+"session/targets", nil)
	if list := ts["targets"].([]any); len(list) != 1 || list[0].(map[string]any)["id"] != simTargetID {
		t.Errorf("targets = %v", ts)
	}
	if code, m := getJSON(t, "POST", url+"interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Settings"}}); code != 200 || !strings.Contains(m["scene"].(string), "Network & internet") {
		t.Errorf("tap Settings: %d %v", code, m)
	}
	// A new session starts a new simulated phone.
	getJSON(t, "DELETE", url+"session", nil)
	if code, m := getJSON(t, "POST", url+"session", map[string]string{"deviceId": "emulator-5554"}); code != 502 || !strings.Contains(m["error"].(string), "without --sim") {
		t.Errorf("another device on a --sim playground: %d %v", code, m)
	}
	if code, m := getJSON(t, "POST", url+"session", map[string]string{"deviceId": simTargetID}); code != 200 || m["state"] != "ready" {
		t.Errorf("POST /session sim: %d %v", code, m)
	}
	code, m := getJSON(t, "POST", url+"execute", map[string]string{"goal": `tap "Settings", then check "Network & internet" exists`})
	if code != 202 {
		t.Fatalf("execute: %d %v", code, m)
	}
	for {
		_, v := getJSON(t, "GET", url+"task-progress/"+m["requestId"].(string), nil)
		if v["status"] != "running" {
			if v["status"] != "done" {
				t.Errorf("task: %v", v)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("task never ended")
		case <-time.After(20 * time.Millisecond):
		}
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
	cmd.SetArgs([]string{"--no-open", "--port", "0", "--config", "none.yaml"})
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
