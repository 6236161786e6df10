// Package attack holds the attacks issue 22 found, each reproduced against
// the real apex binary (a playground, an MCP server) on loopback: a test
// here fails if the defence it names is gone.
package attack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// apexBin is the apex binary TestMain builds.
var apexBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apex-attack-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	apexBin = filepath.Join(dir, "apex")
	build := exec.Command("go", "build", "-o", apexBin, "github.com/apexagent/apex/cmd/apex")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building apex:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running apex process; its stderr goes to a file.
type proc struct {
	cmd    *exec.Cmd
	stderr string
	done   chan struct{}
}

// errors is what the process wrote on stderr so far.
func (p *proc) errors() string {
	b, _ := os.ReadFile(p.stderr)
	return string(b)
}

// cleanEnv is the environment of an apex process: this one's without any
// model or playground settings, plus extra (NAME=value).
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "APEX_") || strings.HasPrefix(k, "MIDSCENE_") || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ANTHROPIC_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// playground starts apex playground with args (after --no-open --port 0
// --dir DIR) in an empty working directory, and returns its URL (ending
// in /, without the token) once it serves. It is killed when t ends.
func playground(t *testing.T, dir string, env []string, args ...string) (string, *proc) {
	t.Helper()
	u, p := playgroundPrinted(t, dir, env, args...)
	u, _, _ = strings.Cut(u, "?")
	return u, p
}

// playgroundPrinted is playground, returning the URL as printed (with its
// token).
func playgroundPrinted(t *testing.T, dir string, env []string, args ...string) (string, *proc) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	// An empty apex.yaml: no model of the operator's unless a test gives one.
	none := filepath.Join(dir, "none.yaml")
	if _, err := os.Stat(none); err != nil {
		if err := os.WriteFile(none, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args = append([]string{"playground", "--no-open", "--port", "0", "--dir", filepath.Join(dir, "runs"), "--config", none}, args...)
	cmd := exec.Command(apexBin, args...)
	cmd.Dir, cmd.Env = dir, cleanEnv(env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: filepath.Join(t.TempDir(), "stderr"), done: make(chan struct{})}
	errFile, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd.Stderr = errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "Apex playground: "); ok {
				urls <- u
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	select {
	case u := <-urls:
		return u, p
	case <-p.done:
		t.Fatalf("apex playground ended before serving: %s", p.errors())
	case <-time.After(60 * time.Second):
		t.Fatalf("apex playground did not serve within 60s: %s", p.errors())
	}
	return "", nil
}

func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// call sends a JSON request (body nil: none) with an optional bearer token
// and returns the status and decoded JSON answer.
func call(t *testing.T, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		m = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, m
}
