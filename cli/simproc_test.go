package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/internal/proctest"
	"github.com/coder/websocket"
)

// TestPlaygroundSimProcessKilled: the playground's simulated phone runs as
// a supervised `apex sim` subprocess; killed with SIGKILL, a new process
// serves the phone within 5 s with the state the killed one had (dark
// mode on, Settings in front: its --state-file), the preview follows the
// new process and the server goes on.
func TestPlaygroundSimProcessKilled(t *testing.T) {
	url := startPlayground(t, &PlaygroundOptions{Port: 0})
	if code, m := getJSON(t, "POST", url+"interact", map[string]any{"action": "Launch", "params": map[string]any{"app": "com.android.settings"}}); code != 200 {
		t.Fatalf("launch Settings: %d %v", code, m)
	}
	ctx := patience.Context(t, 60*time.Second)
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"mjpeg", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	mr := multipart.NewReader(resp.Body, params["boundary"])
	frame := func() []byte {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatalf("the preview stream ended: %v", err)
		}
		b, _ := io.ReadAll(part)
		return b
	}
	pid := simChild(t)
	waitStateFile(t, pid, "com.android.settings")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	limit := patience.Of(5 * time.Second)
	for {
		if after := simChild(t); after != pid {
			if code, m := getJSON(t, "GET", url+"foreground-app", nil); code == 200 {
				if m["app"] != "com.android.settings" {
					t.Errorf("the phone came back with %v in front; want Settings, as before the kill", m["app"])
				}
				break
			}
		}
		frame() // at least one a second: the pace of this poll
		if time.Since(killed) > limit {
			t.Fatalf("the phone did not answer %v after its process (pid %d) was killed", time.Since(killed), pid)
		}
	}
	t.Logf("a new process served the phone %v after the kill", time.Since(killed).Round(time.Millisecond))
	// The preview shows the new process's screen.
	before := frame()
	if code, m := getJSON(t, "POST", url+"interact", map[string]any{"action": "Home"}); code != 200 {
		t.Fatalf("Home after the restart: %d %v", code, m)
	}
	for shown := time.Now(); bytes.Equal(frame(), before); {
		if time.Since(shown) > limit {
			t.Fatal("the preview does not follow the phone after its restart")
		}
	}
	if code, m := getJSON(t, "GET", url+"status", nil); code != 200 || m["ok"] != true {
		t.Errorf("the server after the kill: %d %v", code, m)
	}
}

// simChild is the pid of this process's `apex sim` child.
func simChild(t *testing.T) int {
	t.Helper()
	return proctest.Wait(t, "`apex sim`", func(p proctest.Proc) bool { return len(p.Args) > 1 && p.Args[1] == "sim" }).PID
}

// waitStateFile waits until the state file of the `apex sim` process pid
// (its --state-file) holds want.
func waitStateFile(t *testing.T, pid int, want string) {
	t.Helper()
	var file string
	for _, p := range proctest.Children() {
		for i, a := range p.Args {
			if p.PID == pid && a == "--state-file" && i+1 < len(p.Args) {
				file = p.Args[i+1]
			}
		}
	}
	if file == "" {
		t.Fatalf("the apex sim process %d was given no --state-file", pid)
	}
	patience.Poll(t, 10*time.Second, func() error {
		if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(want)) {
			return fmt.Errorf("the state file %s does not hold %q", file, want)
		}
		return nil
	})
}

// TestPlaygroundRelaysTheSimEncoderCrash: the H.264 encoder (ffmpeg) runs
// inside the playground's `apex sim` subprocess, supervised there; killed,
// its crash and restart reach the playground's GET /events (relayed over
// a pipe), as the phone's own crashes do.
func TestPlaygroundRelaysTheSimEncoderCrash(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("no ffmpeg here: the simulated phone cannot encode H.264 (make deps installs it)")
	}
	url := startPlayground(t, &PlaygroundOptions{Port: 0})
	ctx := patience.Context(t, 60*time.Second)
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"preview/h264", nil)
	if err != nil {
		t.Fatalf("the H.264 preview: %v", err)
	}
	defer ws.CloseNow()
	if _, _, err := ws.Read(ctx); err != nil {
		t.Fatalf("the H.264 preview sent nothing: %v", err)
	}
	go func() { // keep reading: the stream goes on after the crash
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	}()
	ffmpeg := proctest.WaitOf(t, simChild(t), "ffmpeg", func(p proctest.Proc) bool { return p.Name == "ffmpeg" })
	if err := syscall.Kill(ffmpeg.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	want := []string{`"kind":"exited"`, `"kind":"started"`}
	for event := ""; len(want) > 0 && sc.Scan(); {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok && event == "supervisor" && strings.Contains(v, "ffmpeg") && strings.Contains(v, want[0]) {
			t.Logf("relayed: %s", v)
			want = want[1:]
		}
	}
	if len(want) > 0 {
		t.Fatalf("GET /events never said the encoder's %s after it was killed: %v", want[0], sc.Err())
	}
}
