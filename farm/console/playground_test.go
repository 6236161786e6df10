package console_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/server"
	"github.com/chromedp/chromedp"
)

// TestPlaygroundThroughTheDoor: in a real browser, the console opens a
// phone and its link opens the phone's own playground page through the
// front door (under /devices/ID/playground/): the page finds its API
// there, shows the live screen (and says how) and taps the phone. With an
// encoder on the host, the screen comes as H.264: over the WebSocket
// (carried over NATS), or, from a host locked to WebRTC (the page learns
// it from the 409 through the door), as a WebRTC track from the host.
func TestPlaygroundThroughTheDoor(t *testing.T) {
	_, lookErr := exec.LookPath("ffmpeg")
	h264 := lookErr == nil
	for _, tc := range []struct {
		name, lock string
		// frames counts the H.264 frames the page showed.
		transport, frames string
	}{
		{"websocket", "", "h264", `window.apexPreview.decoded`},
		{"webrtc", server.TransportWebRTC, "webrtc", `window.apexRTC.frames`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.lock != "" && !h264 {
				t.Skip("no ffmpeg: the simulated phone cannot encode H.264 here (apt-get install ffmpeg)")
			}
			ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
			defer cancel()
			_, srv := doorFarm(ctx, t, &seen{}, nil, tc.lock)

			tab := chromium.Tab(t, 90*time.Second, "the playground page works through the front door")
			row := `#devices tr[data-id="h1/sim-1"] button`
			err := chromedp.Do(tab,
				chromedp.Navigate(srv.URL+"/?token=the-farm-admin-token"),
				chromedp.WaitVisible(chromedp.CSS(row)),
				chromedp.Click(chromedp.CSS(row)),
				poll(`document.querySelector("#playground").getAttribute("href") === "/devices/h1/sim-1/playground/"`),
				// The address without its slash leads to the page too.
				chromedp.Navigate(srv.URL+"/devices/h1/sim-1/playground"),
				poll(`location.pathname === "/devices/h1/sim-1/playground/" && document.getElementById("status").dataset.state === "ready"`),
				poll(`!!window.apexPreview && window.apexPreview.shown()`),
			)
			if err != nil {
				t.Fatalf("%v (the page says %q)", err, pageSays(tab))
			}
			if h264 {
				err = chromedp.Do(tab, poll(`document.getElementById("transport").dataset.transport === "`+tc.transport+`" && (window.before = `+tc.frames+`) > 0`))
				if err != nil {
					t.Fatalf("%s through the door: %v (the page says %q)", tc.transport, err, pageSays(tab))
				}
			}
			// Tap the screen where it is shown: the page's tap goes through the door.
			err = chromedp.Do(tab,
				chromedp.Click(chromedp.CSS(`#screen-box > :not([hidden]):not(#touch)`)),
				poll(`[...document.querySelectorAll("#log .msg.manual")].some(m => m.textContent.startsWith("Tap at ") && m.textContent.includes("✓"))`),
			)
			if err != nil {
				t.Fatalf("tapping through the door: %v (the page says %q)", err, pageSays(tab))
			}
			if h264 {
				// The tap changed the screen: new frames come.
				if err := chromedp.Do(tab, poll(tc.frames+` > window.before`)); err != nil {
					t.Fatalf("no frame of the changed screen came: %v (the page says %q)", err, pageSays(tab))
				}
			}
		})
	}
}

// pageSays is what the playground page shows of its state and errors.
func pageSays(tab context.Context) string {
	s, _ := chromedp.Run(tab, chromedp.Evaluate[string](`[document.getElementById("status")?.textContent, document.getElementById("transport")?.textContent,
		document.getElementById("preview-msg")?.textContent, document.getElementById("log")?.textContent].join(" / ")`))
	return s
}
