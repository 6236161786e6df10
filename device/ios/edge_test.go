package ios_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/wda/wdatest"
)

// TestLegacyBuild drives a WebDriverAgent of the JSON Wire era: numeric
// statuses, no "ready" in /status, only /wda/tap/0.
func TestLegacyBuild(t *testing.T) {
	s, d := openFake(t, wdatest.Options{Legacy: true, Width: 375, Height: 667, Scale: 2, Apps: []string{"com.example.shop"}}, nil)
	ctx := ctx(t)
	info, err := d.Info(ctx)
	if err != nil || info.Width != 750 || info.Height != 1334 {
		t.Fatalf("Info = %+v, %v; want 750x1334", info, err)
	}
	must(t, d.Tap(ctx, device.Point{X: 100, Y: 200}))
	if got := s.LastBody("POST /session/{sid}/wda/tap/0"); got != `{"x":50,"y":100}` {
		t.Errorf("legacy tap body = %s", got)
	}
	if err := d.LaunchApp(ctx, "com.example.gone"); !errors.Is(err, device.ErrNotFound) {
		t.Fatalf("LaunchApp(missing) = %v; want ErrNotFound", err)
	}
	must(t, d.LaunchApp(ctx, "com.example.shop"))
}

// TestHungWDA: a WebDriverAgent that takes requests and never answers
// (XCTest stuck) is offline after the call's timeout, not a hang.
func TestHungWDA(t *testing.T) {
	fake := wdatest.New(wdatest.Options{})
	t.Cleanup(fake.Close)
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	url := wdatest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/screenshot") {
			select {
			case <-stuck:
			case <-r.Context().Done():
			}
			return
		}
		fake.Config.Handler.ServeHTTP(w, r)
	}))
	d, err := ios.Open(ctx(t), url, &ios.Options{Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	start := time.Now()
	_, err = d.Screenshot(ctx(t))
	if !errors.Is(err, device.ErrOffline) || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("Screenshot of a stuck WDA = %v; want ErrOffline saying it did not answer", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("took %v", el)
	}
}

// TestHostStarting lists a WebDriverAgent that answers but is not ready.
func TestHostStarting(t *testing.T) {
	url := wdatest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"value":{"ready":false,"message":"Waiting for the XCTest runner","state":"starting"},"sessionId":null}`))
	}))
	h, _ := ios.NewHost([]string{url}, nil)
	ts, err := h.Targets(ctx(t))
	if err != nil || len(ts) != 1 || ts[0].State != "starting" || ts[0].Ready() || !strings.Contains(ts[0].Hint, "Waiting for the XCTest runner") {
		t.Fatalf("Targets = %+v, %v", ts, err)
	}
	if _, _, err := device.NewRegistry(h).Open(ctx(t), ts[0].ID); !errors.Is(err, device.ErrOffline) {
		t.Fatalf("Open of a starting WDA = %v; want ErrOffline with the hint", err)
	}
}
