package server_test

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/chromedp/chromedp"

	"github.com/apexagent/apex/internal/proctest"
	"github.com/apexagent/apex/internal/supervise"
	"github.com/apexagent/apex/server"
)

// TestSupervisorCrashOnEvents kills the simulated phone's ffmpeg (a real
// process) while the H.264 preview streams: GET /events says what
// crashed, how, and when it restarts, then that it started again, and
// the preview resumes within 5 s; the page in headless chromium shows
// the crash or the restart.
func TestSupervisorCrashOnEvents(t *testing.T) {
	var srv atomic.Pointer[server.Server]
	p := startPhone(t, &phoneOptions{onSupervise: func(e supervise.Event) {
		if s := srv.Load(); s != nil {
			s.Supervised(e)
		}
	}})
	srv.Store(p.srv)
	if _, err := p.dev.Server().Encoder(); err != nil {
		t.Skipf("%v: the simulated phone cannot encode H.264 here", err)
	}
	p.ready()
	ev := p.events()
	tab := browserTabFor(t, 2*time.Minute)
	if err := chromedp.Do(tab, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, void(chromedp.Poll[bool](`window.apexPreview.shown()`, chromedp.WithPollingTimeout(patience.Of(45*time.Second))))); err != nil {
		t.Fatalf("waiting for the preview: %v", err)
	}
	changeScreen(t, p)
	ctx, c := p.h264(t)
	frames := make(chan time.Time, 1024)
	go func() {
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				close(frames)
				return
			}
			if msg[0] != 1 {
				select {
				case frames <- time.Now():
				default:
				}
			}
		}
	}()
	if _, ok := <-frames; !ok {
		t.Fatal("the H.264 preview sent no frame")
	}

	var ffmpeg int
	for _, pr := range proctest.Children() {
		if pr.Name == "ffmpeg" {
			ffmpeg = pr.PID
		}
	}
	if ffmpeg == 0 {
		t.Fatal("no ffmpeg among this process's children while the H.264 preview streams")
	}
	if err := syscall.Kill(ffmpeg, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()

	want := []string{"exited", "started"}
	for len(want) > 0 {
		typ, m := ev.next(t)
		if typ != "supervisor" {
			continue
		}
		s := m["supervisor"].(map[string]any)
		if s["kind"] != want[0] || !strings.Contains(s["name"].(string), "ffmpeg") {
			t.Fatalf("supervisor event %v, want %s of ffmpeg", s, want[0])
		}
		if want[0] == "exited" {
			if !strings.Contains(s["error"].(string), "killed") || s["restartMs"] == nil || !strings.Contains(s["text"].(string), "restarting in") {
				t.Errorf("the crash event %v: want the exit status (killed), restartMs and its sentence", s)
			}
		} else if s["run"].(float64) != 2 {
			t.Errorf("the restart event %v, want run 2", s)
		}
		want = want[1:]
	}
	waitFor(t, tab, "the page to show ffmpeg's crash or restart", `["exited", "started"].includes(document.getElementById("preview-msg").dataset.supervisor) && document.getElementById("preview-msg").textContent.includes("ffmpeg")`)
	// Frames from before the restart do not count (the old ffmpeg's
	// last ones): the new encoder's frames follow.
	restarted := time.Now()
	for at := range frames {
		if at.After(restarted) {
			if d := at.Sub(killed); d > patience.Of(5*time.Second) {
				t.Errorf("the preview resumed %v after ffmpeg was killed, want within %v", d, patience.Of(5*time.Second))
			}
			return
		}
	}
	t.Fatal("the H.264 preview ended after ffmpeg was killed")
}
