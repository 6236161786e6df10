package cli

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/internal/proctest"
)

// TestPlaygroundSimProcessKilled: the playground's simulated phone runs as
// a supervised `apex sim` subprocess; killed with SIGKILL, the preview
// shows the phone again within 5 s and the server goes on.
func TestPlaygroundSimProcessKilled(t *testing.T) {
	url := startPlayground(t, &PlaygroundOptions{Port: 0})
	// Settings in front: the phone started again shows its home screen.
	if code, m := getJSON(t, "POST", url+"interact", map[string]any{"action": "Launch", "params": map[string]any{"app": "com.android.settings"}}); code != 200 {
		t.Fatalf("launch Settings: %d %v", code, m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
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
	before := frame()
	pid := simChild(t)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	limit := patience.Of(5 * time.Second)
	for bytes.Equal(frame(), before) {
		if time.Since(killed) > limit {
			t.Fatalf("no new frame %v after the simulated phone (pid %d) was killed", time.Since(killed), pid)
		}
	}
	t.Logf("the preview showed the phone again %v after the kill", time.Since(killed).Round(time.Millisecond))
	if after := simChild(t); after == pid {
		t.Errorf("the same process %d serves the phone after the kill", pid)
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
