package attack

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMCPStdioGarbage: malformed lines get JSON-RPC errors and apex mcp
// keeps serving: the ping after them is answered.
func TestMCPStdioGarbage(t *testing.T) {
	cmd := exec.Command(apexBin, "mcp", "--dir", t.TempDir())
	cmd.Dir, cmd.Env = t.TempDir(), cleanEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	lines := []struct {
		line string
		code float64
	}{
		{"not json", -32700},
		{`{"id":7,"method":"ping"}`, -32600},
		{strings.Repeat("[", 1200) + strings.Repeat("]", 1200), -32700},
		{`{"jsonrpc":"2.0","id":8,"method":"ping","params":` + strings.Repeat(`{"a":`, 1100) + "1" + strings.Repeat("}", 1100) + "}", -32700},
	}
	for _, l := range lines {
		fmt.Fprintln(in, l.line)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	answers := make(chan map[string]any)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m map[string]any
			json.Unmarshal(sc.Bytes(), &m)
			answers <- m
		}
		close(answers)
	}()
	timeout := time.After(30 * time.Second)
	for i := 0; i <= len(lines); i++ {
		select {
		case m, ok := <-answers:
			if !ok {
				t.Fatalf("apex mcp ended after %d answers", i)
			}
			if i == len(lines) {
				if m["id"] != 1.0 || m["result"] == nil {
					t.Errorf("the ping after the garbage: %v", m)
				}
				continue
			}
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != lines[i].code {
				t.Errorf("line %d (%.30s…): %v, want error %v", i, lines[i].line, m, lines[i].code)
			}
		case <-timeout:
			t.Fatalf("no answer %d within 30s", i)
		}
	}
}
