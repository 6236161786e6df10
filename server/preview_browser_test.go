package server_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/chromedp/chromedp"
)

// changeScreen keeps the simulated phone's screen changing (two apps in
// turn) until the test ends.
func changeScreen(t testing.TB, p *phone) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	go func() {
		defer close(done)
		apps := []string{"com.android.settings", "com.apex.shop"}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			_ = p.dev.Phone.Launch(apps[i%2])
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// TestH264PreviewInBrowser: headless chromium decodes the simulated
// phone's H.264 preview with WebCodecs, says so, and keeps decoding new
// frames while the screen changes. (The frame rate is a benchmark's:
// BenchmarkH264InBrowser.)
func TestH264PreviewInBrowser(t *testing.T) {
	p := startPhone(t, nil)
	if _, err := p.dev.Server().Encoder(); err != nil {
		t.Skipf("%v: the simulated phone cannot encode H.264 here", err)
	}
	ctx := browserTabFor(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	// The first frame waits for ffmpeg to start: slow under the race
	// detector on a busy machine.
	if err := chromedp.Do(ctx, void(chromedp.Poll[bool](`document.getElementById("transport").dataset.transport === "h264" && window.apexPreview.shown()`, chromedp.WithPollingTimeout(patience.Of(45*time.Second))))); err != nil {
		t.Fatalf("waiting for the H.264 preview: %v; the page says %q", err, eval[string](t, ctx, `document.getElementById("transport").textContent + " / " + document.getElementById("preview-msg").textContent`))
	}
	if got := eval[string](t, ctx, `document.getElementById("transport").textContent`); got != "H.264 (WebCodecs)" {
		t.Errorf("the transport shown: %q", got)
	}
	if w := eval[int](t, ctx, `document.getElementById("screen-video").width`); w != 540 {
		t.Errorf("the H.264 frames are %d wide, want 540 (half the screen)", w)
	}
	before := eval[int](t, ctx, `window.apexPreview.decoded`)
	changeScreen(t, p)
	waitFor(t, ctx, "five more decoded frames of a changing screen", `window.apexPreview.decoded >= `+itoa(before+5))
	if tr := eval[string](t, ctx, `document.getElementById("transport").dataset.transport`); tr != "h264" {
		t.Errorf("the transport became %q while the screen changed", tr)
	}
	// Turned to landscape, the stream starts again at the new size with a
	// new config, and the page decodes it: not the portrait size
	// stretched.
	if err := p.dev.Phone.SetRotation(1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "landscape frames (1200×540) after the phone turned", `document.getElementById("screen-video").width === 1200 && document.getElementById("screen-video").height === 540`)
	before = eval[int](t, ctx, `window.apexPreview.decoded`)
	waitFor(t, ctx, "five more decoded landscape frames", `window.apexPreview.decoded >= `+itoa(before+5))
}

// TestH264RefusedFallsBackToMJPEG: a phone without an H.264 encoder
// refuses the stream; the page says why and shows MJPEG.
func TestH264RefusedFallsBackToMJPEG(t *testing.T) {
	p := startPhone(t, &phoneOptions{encoder: "none"})
	ctx := browserTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the MJPEG preview", `document.getElementById("transport").dataset.transport === "mjpeg" && window.apexPreview.shown()`)
	got := eval[string](t, ctx, `document.getElementById("transport").textContent`)
	if !strings.HasPrefix(got, "MJPEG — ") || !strings.Contains(got, "no H.264 encoder: install ffmpeg") {
		t.Errorf("the transport shown: %q, want MJPEG and why H.264 was refused", got)
	}
	if n := eval[int](t, ctx, `window.apexPreview.decoded`); n != 0 {
		t.Errorf("%d H.264 frames decoded from a refused stream", n)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
