package wda_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/apexagent/apex/bench/benchtest"
	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/wda"
)

// observe does what a driver's observation does over HTTP: GET /source and
// GET /screenshot, decoding the JSON and the base64 PNG.
func observe(b *testing.B, c *http.Client, base string) (shot string) {
	for _, path := range []string{"/source", "/screenshot"} {
		resp, err := c.Get(base + path)
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		var env struct{ Value string }
		if err := json.Unmarshal(data, &env); err != nil {
			b.Fatal(err)
		}
		if path == "/screenshot" {
			if _, err := base64.StdEncoding.DecodeString(env.Value); err != nil {
				b.Fatal(err)
			}
			shot = env.Value
		}
	}
	return shot
}

// BenchmarkSourceScreenshot measures one observation of Shop's result list
// (1170×2532 px). "changed" scrolls the list before each observation (not
// timed) so the screenshot is drawn and encoded anew, as after every
// action; "same" observes an unchanged screen (the PNG comes from the
// cache). ms-median is the median observation, cpu-ms/call the CPU this
// process (server and client) spent per observation.
func BenchmarkSourceScreenshot(b *testing.B) {
	for _, mode := range []string{"changed", "same"} {
		b.Run(mode, func(b *testing.B) {
			// A still clock keeps Shop's delayed sale popup (which would
			// block the scrolling) away.
			clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 41, 0, 0, time.UTC)}
			p, err := sim.NewPhone(sim.Options{Platform: sim.PlatformIOS, Clock: clock})
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Launch("com.apex.shop"); err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(wda.NewServer(p, nil))
			defer srv.Close()
			c := srv.Client()
			observe(b, c, srv.URL)
			var s benchtest.Sampler
			var prev string
			for i := 0; b.Loop(); i++ {
				if mode == "changed" {
					b.StopTimer()
					if i%2 == 0 {
						p.Swipe(600, 2000, 600, 1400, 200*time.Millisecond)
					} else {
						p.Swipe(600, 1400, 600, 2000, 200*time.Millisecond)
					}
					b.StartTimer()
				}
				var shot string
				s.Time(func() { shot = observe(b, c, srv.URL) })
				if mode == "changed" && shot == prev {
					b.Fatalf("observation %d: the screen did not change", i)
				}
				prev = shot
			}
			s.Report(b, "")
		})
	}
}
