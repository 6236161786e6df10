package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/server"
	"github.com/chromedp/chromedp"
)

// TestWebRTCPreviewInBrowser: a playground locked to WebRTC answers the
// WebSocket preview with 409 naming WebRTC; headless chromium then sends
// its whole offer, gets the answer, and decodes the simulated phone's
// H.264 frames from the video track while the screen changes, saying
// "WebRTC".
func TestWebRTCPreviewInBrowser(t *testing.T) {
	p := startPhone(t, &phoneOptions{opts: server.Options{PreviewTransport: server.TransportWebRTC}})
	if _, err := p.dev.Server().Encoder(); err != nil {
		t.Skipf("%v: the simulated phone cannot encode H.264 here", err)
	}
	if code, data := p.raw("POST", "/session", map[string]string{}, nil); code != http.StatusOK {
		t.Fatalf("open the session: %d %s", code, data)
	}
	code, data := p.raw("GET", "/preview/h264", nil, nil)
	if code != http.StatusConflict || !strings.Contains(string(data), `"transport":"webrtc"`) {
		t.Errorf("GET /preview/h264 of a playground locked to WebRTC: %d %s, want 409 naming webrtc", code, data)
	}

	ctx := browserTabFor(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	// The first frame waits for ffmpeg to start: slow under the race
	// detector on a busy machine.
	if err := chromedp.Do(ctx, void(chromedp.Poll[bool](`document.getElementById("transport").dataset.transport === "webrtc" && window.apexPreview.shown()`, chromedp.WithPollingTimeout(patience.Of(60*time.Second))))); err != nil {
		t.Fatalf("waiting for the WebRTC preview: %v; the page says %q", err, eval[string](t, ctx, `document.getElementById("transport").textContent + " / " + document.getElementById("preview-msg").textContent`))
	}
	if got := eval[string](t, ctx, `document.getElementById("transport").textContent`); got != "WebRTC" {
		t.Errorf("the transport shown: %q", got)
	}
	changeScreen(t, p)
	before := eval[int](t, ctx, `window.apexRTC.frames`)
	if err := chromedp.Do(ctx, void(chromedp.Poll[bool](`window.apexRTC.frames >= `+itoa(before+5), chromedp.WithPollingTimeout(patience.Of(60*time.Second))))); err != nil {
		t.Fatalf("waiting for five more frames of a changing screen over WebRTC (%d after %d): %v", eval[int](t, ctx, `window.apexRTC.frames`), before, err)
	}
	// The browser's own count: each poll asks for the stats, and reads
	// the answer of the previous one.
	waitFor(t, ctx, "getStats to count 5 frames decoded", `(window.apexRTC.pc.getStats().then(s => s.forEach(r => {
		if (r.type === "inbound-rtp" && r.kind === "video") window.framesDecoded = r.framesDecoded;
	})), (window.framesDecoded || 0) >= 5)`)
	if w := eval[int](t, ctx, `document.getElementById("screen-rtc").videoWidth`); w != 540 {
		t.Errorf("the WebRTC frames are %d wide, want 540 (half the screen)", w)
	}
	if n := eval[int](t, ctx, `window.apexPreview.decoded`); n != 0 {
		t.Errorf("%d frames came over the H.264 WebSocket of a playground locked to WebRTC", n)
	}
}
