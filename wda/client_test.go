package wda_test

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/wda"
	"github.com/apexagent/apex/wda/wdatest"
	"github.com/google/go-cmp/cmp"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func start(t *testing.T, opts wdatest.Options) (*wdatest.Server, *wda.Client) {
	t.Helper()
	s := wdatest.New(opts)
	t.Cleanup(s.Close)
	c, err := wda.New(s.URL, &wda.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestClientAgainstFake(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := "w3c"
		if legacy {
			name = "jsonwp"
		}
		t.Run(name, func(t *testing.T) {
			s, c := start(t, wdatest.Options{Legacy: legacy, Apps: []string{"com.example.shop"}})
			ctx := ctx(t)
			st, err := c.Status(ctx)
			if err != nil || !st.Ready || st.OS.Name != "iOS" {
				t.Fatalf("Status = %+v, %v", st, err)
			}
			if s.Sessions() != 0 {
				t.Fatal("Status created a session; sessions must be lazy")
			}
			size, err := c.WindowSize(ctx)
			if err != nil || size != (wda.Size{Width: 390, Height: 844}) {
				t.Fatalf("WindowSize = %+v, %v", size, err)
			}
			scr, err := c.Screen(ctx)
			if err != nil || scr.Scale != 3 {
				t.Fatalf("Screen = %+v, %v", scr, err)
			}
			shot, err := c.Screenshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(shot))
			if err != nil || cfg.Width != 1170 || cfg.Height != 2532 {
				t.Fatalf("screenshot %dx%d, %v; want 1170x2532", cfg.Width, cfg.Height, err)
			}
			src, err := c.Source(ctx)
			if err != nil || !bytes.Contains(src, []byte("XCUIElementTypeApplication")) {
				t.Fatalf("Source = %.80s, %v", src, err)
			}
			js, err := c.SourceJSON(ctx)
			if err != nil || !bytes.Contains(js, []byte(`"Application"`)) {
				t.Fatalf("SourceJSON = %s, %v", js, err)
			}
			if err := c.Tap(ctx, wda.Point{X: 10.5, Y: 20}); err != nil {
				t.Fatal(err)
			}
			if err := c.Keys(ctx, "héllo 你好 👋"); err != nil || s.Typed() != "héllo 你好 👋" {
				t.Fatalf("Keys typed %q, %v", s.Typed(), err)
			}
			if err := c.Swipe(ctx, wda.Point{X: 100, Y: 600}, wda.Point{X: 100, Y: 200}, 300*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if err := c.LongPress(ctx, wda.Point{X: 50, Y: 50}, time.Second); err != nil {
				t.Fatal(err)
			}
			if err := c.Drag(ctx, wda.Point{X: 50, Y: 50}, wda.Point{X: 60, Y: 300}, 600*time.Millisecond, 400*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if err := c.LaunchApp(ctx, "com.example.shop", nil, nil); err != nil {
				t.Fatal(err)
			}
			if a, err := c.ActiveApp(ctx); err != nil || a.BundleID != "com.example.shop" {
				t.Fatalf("ActiveApp = %+v, %v", a, err)
			}
			if st, err := c.AppState(ctx, "com.example.shop"); err != nil || st != wda.AppForeground {
				t.Fatalf("AppState = %v, %v", st, err)
			}
			if err := c.LaunchApp(ctx, "com.example.missing", nil, nil); !errors.Is(err, wda.ErrAppNotInstalled) {
				t.Fatalf("LaunchApp(missing) = %v; want ErrAppNotInstalled", err)
			}
			if was, err := c.TerminateApp(ctx, "com.example.shop"); err != nil || !was {
				t.Fatalf("TerminateApp = %v, %v", was, err)
			}
			if err := c.ActivateApp(ctx, "com.example.shop"); err != nil {
				t.Fatal(err)
			}
			if err := c.PressButton(ctx, wda.ButtonHome); err != nil {
				t.Fatal(err)
			}
			if err := c.PressButton(ctx, "power"); !errors.Is(err, wda.ErrInvalidArgument) {
				t.Fatalf("PressButton(power) = %v; want ErrInvalidArgument", err)
			}
			if err := c.Homescreen(ctx); err != nil {
				t.Fatal(err)
			}
			if err := c.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if l, err := c.Locked(ctx); err != nil || !l {
				t.Fatalf("Locked = %v, %v", l, err)
			}
			if err := c.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.AlertText(ctx); !errors.Is(err, wda.ErrNoAlert) {
				t.Fatalf("AlertText with none = %v; want ErrNoAlert", err)
			}
			s.ShowAlert("Allow notifications?")
			if txt, err := c.AlertText(ctx); err != nil || txt != "Allow notifications?" {
				t.Fatalf("AlertText = %q, %v", txt, err)
			}
			if err := c.AcceptAlert(ctx, ""); err != nil {
				t.Fatal(err)
			}
			if err := c.DismissAlert(ctx, ""); !errors.Is(err, wda.ErrNoAlert) {
				t.Fatalf("DismissAlert with none = %v; want ErrNoAlert", err)
			}
			els, err := c.FindElements(ctx, wda.ByAccessibilityID, "counter")
			if err != nil || len(els) != 1 {
				t.Fatalf("FindElements = %v, %v", els, err)
			}
			if r, err := els[0].Rect(ctx); err != nil || r.Width != 60 {
				t.Fatalf("Rect = %+v, %v", r, err)
			}
			if err := els[0].Click(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.FindElement(ctx, wda.ByPredicate, "label == 'nope'"); !errors.Is(err, wda.ErrNoSuchElement) {
				t.Fatalf("FindElement(nope) = %v; want ErrNoSuchElement", err)
			}
			if els, err := c.FindElements(ctx, wda.ByClassChain, "**/XCUIElementTypeNavigationBar/XCUIElementTypeButton"); err != nil || len(els) != 1 {
				t.Fatalf("FindElements(class chain) = %v, %v", els, err)
			}
			if s.Sessions() != 1 {
				t.Errorf("%d sessions created; want one reused", s.Sessions())
			}
			if err := c.DeleteSession(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestWireShapes pins the requests WebDriverAgent receives.
func TestWireShapes(t *testing.T) {
	s, c := start(t, wdatest.Options{})
	ctx := ctx(t)
	c.Tap(ctx, wda.Point{X: 10.5, Y: 20})
	c.Swipe(ctx, wda.Point{X: 1, Y: 2}, wda.Point{X: 3, Y: 4}, 250*time.Millisecond)
	c.Keys(ctx, "a你")
	tests := map[string]string{
		"POST /session/{sid}/wda/tap":  `{"x":10.5,"y":20}`,
		"POST /session/{sid}/actions":  `{"actions":[{"actions":[{"type":"pointerMove","duration":0,"x":1,"y":2},{"type":"pointerDown","button":0},{"type":"pause","duration":50},{"type":"pointerMove","duration":250,"x":3,"y":4},{"type":"pointerUp","button":0}],"id":"finger1","parameters":{"pointerType":"touch"},"type":"pointer"}]}`,
		"POST /session/{sid}/wda/keys": `{"value":["a","你"]}`,
	}
	for call, want := range tests {
		if diff := cmp.Diff(want, s.LastBody(call)); diff != "" {
			t.Errorf("%s body (-want +got):\n%s", call, diff)
		}
	}
}

func TestLegacyTapFallsBack(t *testing.T) {
	s, c := start(t, wdatest.Options{Legacy: true})
	if err := c.Tap(ctx(t), wda.Point{X: 1, Y: 2}); err != nil {
		t.Fatal(err)
	}
	calls := strings.Join(s.Calls(), "\n")
	if !strings.Contains(calls, "POST /session/{sid}/wda/tap/0") {
		t.Fatalf("no fallback to /wda/tap/0 in:\n%s", calls)
	}
}

func TestSessionRecreatedOnceAfterRestart(t *testing.T) {
	s, c := start(t, wdatest.Options{})
	ctx := ctx(t)
	if _, err := c.Source(ctx); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	if _, err := c.Source(ctx); err != nil {
		t.Fatalf("Source after a restart = %v; want the session recreated", err)
	}
	if s.Sessions() != 2 || c.SessionsCreated() != 2 {
		t.Fatalf("sessions: server %d, client %d; want 2", s.Sessions(), c.SessionsCreated())
	}
}

// TestSessionRecreatedOnlyOnce: a WebDriverAgent that forgets every session
// at once is not retried forever.
func TestSessionRecreatedOnlyOnce(t *testing.T) {
	forget := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/session" {
			w.Write([]byte(`{"value":{"sessionId":"S1"},"sessionId":"S1"}`))
			return
		}
		w.WriteHeader(404)
		w.Write([]byte(`{"value":{"error":"invalid session id","message":"Session does not exist"},"sessionId":"S1"}`))
	})
	srv := wdatest.Serve(t, forget)
	c, _ := wda.New(srv, nil)
	_, err := c.Source(ctx(t))
	if !errors.Is(err, wda.ErrInvalidSession) || c.SessionsCreated() != 2 {
		t.Fatalf("Source = %v after %d sessions; want ErrInvalidSession after 2", err, c.SessionsCreated())
	}
}

func TestUnreachableAndHanging(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := l.Addr().String()
	l.Close()
	c, _ := wda.New(dead, &wda.Options{Timeout: time.Second})
	if _, err := c.Status(ctx(t)); !errors.Is(err, wda.ErrUnreachable) {
		t.Fatalf("Status of a closed port = %v; want ErrUnreachable", err)
	}

	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	hang := wdatest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	c, _ = wda.New(hang, &wda.Options{Timeout: 200 * time.Millisecond})
	start := time.Now()
	if _, err := c.Status(ctx(t)); !errors.Is(err, wda.ErrUnreachable) {
		t.Fatalf("Status of a hanging server = %v; want ErrUnreachable", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the timeout took %v", el)
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Status(cctx); !errors.Is(err, context.Canceled) || errors.Is(err, wda.ErrUnreachable) {
		t.Fatalf("Status on a cancelled context = %v; want context.Canceled only", err)
	}
}

func TestParseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8100":  "http://127.0.0.1:8100",
		"127.0.0.1:8100/":        "http://127.0.0.1:8100",
		" https://wda.local/x/ ": "https://wda.local/x",
	} {
		u, err := wda.ParseURL(in)
		if err != nil || u.String() != want {
			t.Errorf("ParseURL(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://x", "http://"} {
		if _, err := wda.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) succeeded", bad)
		}
	}
}
