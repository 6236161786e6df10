package server_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/browsertest"
	"github.com/apexagent/apex/internal/patience"
	"github.com/chromedp/chromedp"

	"github.com/apexagent/apex/scene"
)

// chromium is the one headless chromium of this package's tests.
var chromium browsertest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	chromium.Close()
	os.Exit(code)
}

// browserTab opens a tab in a browser context of its own, whose actions
// time out after 50 s, or skips the test when chromium is absent.
func browserTab(t *testing.T) context.Context {
	t.Helper()
	return browserTabFor(t, 50*time.Second)
}

// browserTabFor is browserTab for a test that drives the page for longer.
func browserTabFor(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	return chromium.Tab(t, timeout, "drive the playground page in a real browser")
}

// eval runs a script in the page and returns its value.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitFor polls a script until it is true, failing with what the page says.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	if err := chromedp.Do(ctx, void(chromedp.Poll[bool](js, chromedp.WithPollingTimeout(patience.Of(20*time.Second))))); err != nil {
		t.Fatalf("waiting for %s: %v\npage:\n%s", what, err, pageText(t, ctx))
	}
}

// waitAcross is waitFor while the page navigates: a poll in the page is
// cut short when its script context changes, so this asks again each time.
func waitAcross(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	err := patience.Until(20*time.Second, func() error {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err == nil && !ok {
			err = fmt.Errorf("the page does not say it yet")
		}
		return err
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v\npage:\n%s", what, err, pageText(t, ctx))
	}
}

// pageText is the playground page's conversation, or another page's text,
// behind its address: what a failed wait shows.
func pageText(t *testing.T, ctx context.Context) string {
	return eval[string](t, ctx, `location.href +
		(document.body && document.body.dataset.session !== undefined ? "\nsession: " + document.body.dataset.session + " (" + document.getElementById("status").textContent + "), preview: " + (document.getElementById("preview-msg") || {}).textContent : "") +
		"\n" + ((document.getElementById("log") || document.body || {}).innerText || "").slice(0, 2000)`)
}

func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, t)
		return chromedp.Void{}, err
	}
}

// waitForeground polls the simulated phone until pred holds for its
// foreground app.
func waitForeground(t *testing.T, p *phone, what string, pred func(string) bool) {
	t.Helper()
	patience.Poll(t, 15*time.Second, func() error {
		if fg, _ := p.dev.Phone.Foreground(); !pred(fg) {
			return fmt.Errorf("%s: the foreground app is still %q", what, fg)
		}
		return nil
	})
}

// screen reads the phone's screen as a Scene.
func screen(t *testing.T, p *phone) *scene.Scene {
	t.Helper()
	src, err := p.dev.Phone.DumpUI()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.FromSource(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// centerOf is the centre of the first element on the phone's screen that
// match accepts.
func centerOf(t *testing.T, p *phone, what string, match func(scene.Element) bool) (x, y int) {
	t.Helper()
	sc := screen(t, p)
	for _, e := range sc.Elements {
		if !e.System && match(e) {
			return (e.Bounds.X0 + e.Bounds.X1) / 2, (e.Bounds.Y0 + e.Bounds.Y1) / 2
		}
	}
	t.Fatalf("no %s on the screen:\n%s", what, sc.Text())
	return 0, 0
}

func withText(s string) func(scene.Element) bool {
	return func(e scene.Element) bool { return strings.TrimSpace(e.Text) == s }
}

type rect struct {
	Left, Top, Width, Height float64
}

func TestUIInBrowser(t *testing.T) {
	p := startPhone(t, nil)
	// The whole walk through the page, which takes minutes on a loaded
	// machine.
	ctx := browserTabFor(t, 3*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if title := eval[string](t, ctx, `document.title`); title != "Apex playground" {
		t.Fatalf("GET / in a browser: title %q, want the playground page", title)
	}

	// With one device online the page connects by itself.
	waitFor(t, ctx, "the session to be ready", `document.body.dataset.session === "ready" && !document.getElementById("run").disabled`)
	if st := p.state(); st != "ready" {
		t.Fatalf("server session = %q after the page connected", st)
	}
	waitFor(t, ctx, "the preview to show the screen", `window.apexPreview.shown()`)

	// A goal in the conversation panel runs and streams its progress.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#goal"), `tap "Settings"`),
		chromedp.Click(chromedp.CSS("#run")),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the goal to end", `document.querySelector("#log .status") !== null`)
	status := eval[string](t, ctx, `document.querySelector("#log .status").className`)
	lines := eval[int](t, ctx, `document.querySelectorAll("#log .progress").length`)
	if !strings.Contains(status, "status-done") || lines == 0 {
		t.Fatalf("goal ended with %q after %d progress lines:\n%s", status, lines, eval[string](t, ctx, `document.getElementById("log").innerText`))
	}
	waitForeground(t, p, "after the goal", func(fg string) bool { return fg == "com.android.settings" })

	// Home, then a click on the Settings icon of the preview taps it.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#home"))); err != nil {
		t.Fatal(err)
	}
	waitForeground(t, p, "after Home", func(fg string) bool { return fg != "com.android.settings" })
	waitFor(t, ctx, "Home to be done", `document.querySelector("#log .msg.manual") && document.querySelector("#log .msg.manual").textContent.includes("✓")`)
	x, y := centerOf(t, p, "Settings icon", withText("Settings"))
	w, h, _ := p.dev.Phone.Display()
	// box is where the preview shows the screen now (the layout moves it).
	box := func() rect {
		t.Helper()
		r := eval[rect](t, ctx, `(() => { const r = window.apexPreview.surface().getBoundingClientRect(); return {Left: r.left, Top: r.top, Width: r.width, Height: r.height}; })()`)
		if r.Width <= 0 || r.Height <= 0 {
			t.Fatalf("preview image box %+v", r)
		}
		return r
	}
	// click taps the preview where the device pixel (x, y) is shown.
	click := func(x, y int) {
		t.Helper()
		r := box()
		cx, cy := r.Left+(float64(x)+0.5)*r.Width/float64(w), r.Top+(float64(y)+0.5)*r.Height/float64(h)
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(cx, cy)); err != nil {
			t.Fatal(err)
		}
	}
	click(x, y)
	waitForeground(t, p, fmt.Sprintf("after a click on the preview at device (%d,%d)", x, y), func(fg string) bool { return fg == "com.android.settings" })
	waitFor(t, ctx, "the tap to be logged", `Array.from(document.querySelectorAll("#log .msg.manual")).some(m => m.textContent.startsWith("Tap at") && m.textContent.includes("✓"))`)

	// Back, recorded, leaves Settings, so the long task below starts from
	// home; the recorder exports it as a script.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#rec-start"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the recorder to start", `document.getElementById("rec-state").dataset.state === "on"`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#back"))); err != nil {
		t.Fatal(err)
	}
	waitForeground(t, p, "after Back", func(fg string) bool { return fg != "com.android.settings" })
	waitFor(t, ctx, "Back to be done", `Array.from(document.querySelectorAll("#log .msg.manual")).some(m => m.textContent === "Back ✓")`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#rec-stop"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the recorder to stop", `document.getElementById("rec-state").dataset.state === "off"`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#rec-export"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the exported script", `!document.getElementById("rec-yaml").hidden && document.getElementById("rec-yaml").textContent.includes("flow:")`)
	if yaml := eval[string](t, ctx, `document.getElementById("rec-yaml").textContent`); !strings.Contains(yaml, "- Back") || strings.Contains(yaml, "Swipe") {
		t.Errorf("exported script records only Back; got:\n%s", yaml)
	}

	// A long task is canceled from the page.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#goal"), longGoal),
		chromedp.Click(chromedp.CSS("#run")),
		chromedp.WaitVisible(chromedp.CSS("#cancel")),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the long task to run", `document.querySelectorAll("#log .status").length === 1 && document.body.dataset.session === "running"`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#cancel"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the task to show canceled", `document.querySelectorAll("#log .status").length === 2 && document.querySelectorAll("#log .status")[1].classList.contains("status-canceled")`)
	if st := p.state(); st != "ready" {
		t.Errorf("server session after cancel = %q, want ready", st)
	}
	waitFor(t, ctx, "Run to be usable again", `document.getElementById("cancel").hidden && !document.getElementById("run").disabled`)

	// A drag across the preview is a swipe between the two points.
	r := box()
	midY := r.Top + 0.7*r.Height
	if err := chromedp.Do(ctx, chromedp.DragAndDropXY(r.Left+0.2*r.Width, midY, r.Left+0.8*r.Width, midY)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the swipe to be done", `Array.from(document.querySelectorAll("#log .msg.manual")).some(m => m.textContent.startsWith("Swipe ") && m.textContent.includes("✓"))`)
	swipe := eval[string](t, ctx, `Array.from(document.querySelectorAll("#log .msg.manual")).find(m => m.textContent.startsWith("Swipe ")).textContent`)
	var x0, y0, x1, y1 int
	if _, err := fmt.Sscanf(swipe, "Swipe %d, %d → %d, %d", &x0, &y0, &x1, &y1); err != nil || x0 >= x1 || x1-x0 < w/2 || y0 != y1 {
		t.Errorf("drag across the preview became %q; want a swipe left to right over half the %d-pixel width", swipe, w)
	}

	// Disconnect shows the device choice; Connect opens the session again.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#disconnect"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the device choice", `document.body.dataset.session === "required" && !document.getElementById("setup").hidden && window.apexPreview.surface() === null`)
	if st := p.state(); st != "required" {
		t.Errorf("server session after Disconnect = %q, want required", st)
	}
	waitFor(t, ctx, "the device list", `document.querySelectorAll("#device-select option").length === 1`)
	if opt := eval[string](t, ctx, `document.getElementById("device-select").value`); !strings.Contains(opt, p.dev.Serial) {
		t.Errorf("device choice = %q, want the phone %s", opt, p.dev.Serial)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#connect"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the session to be ready again", `document.body.dataset.session === "ready" && document.getElementById("setup").hidden`)
	waitFor(t, ctx, "the preview to show the screen again", `window.apexPreview.shown()`)

	// Typing: from home (the canceled task may have left Settings open),
	// open Login, tap its username field on the preview, type.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#home"))); err != nil {
		t.Fatal(err)
	}
	waitForeground(t, p, "after Home", func(fg string) bool { return fg == "com.apex.launcher" })
	click(centerOf(t, p, "Login icon", withText("Login")))
	waitForeground(t, p, "after a click on the Login icon", func(fg string) bool { return fg == "com.apex.login" })
	click(centerOf(t, p, "username field", func(e scene.Element) bool {
		return strings.Contains(e.ResourceID, "username") || strings.Contains(e.Text, "Username")
	}))
	waitFor(t, ctx, "the tap on the field", `Array.from(document.querySelectorAll("#log .msg.manual")).filter(m => m.textContent.startsWith("Tap at") && m.textContent.includes("✓")).length === 3`)
	if sc := screen(t, p); strings.Contains(sc.Text(), "demo") {
		t.Fatalf("the login screen shows demo before any typing:\n%s", sc.Text())
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#type-text"), "demo"),
		chromedp.Click(chromedp.CSS("#type-form button")),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the typing to be done", `Array.from(document.querySelectorAll("#log .msg.manual")).some(m => m.textContent.startsWith("Type") && m.textContent.includes("✓"))`)
	if sc := screen(t, p); !strings.Contains(sc.Text(), "demo") {
		t.Errorf("after typing demo into the username field the screen is:\n%s", sc.Text())
	}
}

// GET / without asking for HTML still lists the API, as does GET /api.
func TestIndexServesPageOrAPI(t *testing.T) {
	p := startPhone(t, nil)
	m := p.mustDo(200, "GET", "/api", nil)
	if eps, _ := m["endpoints"].([]any); len(eps) == 0 {
		t.Errorf("GET /api = %v, want the endpoints", m)
	}
	code, page := p.raw("GET", "/", nil, map[string][]string{"Accept": {"text/html,*/*"}})
	if code != 200 || !strings.Contains(string(page), `<script src="ui/app.js">`) {
		t.Errorf("GET / for a browser: %d\n%.300s", code, page)
	}
	for _, f := range []string{"/ui/app.js", "/ui/context.js", "/ui/settings.js", "/ui/runs.js", "/ui/app.css"} {
		if code, body := p.raw("GET", f, nil, nil); code != 200 || len(body) == 0 {
			t.Errorf("GET %s: %d, %d bytes", f, code, len(body))
		}
	}
	if code, _ := p.raw("GET", "/ui/nothing.js", nil, nil); code != 404 {
		t.Errorf("GET /ui/nothing.js: %d, want 404", code)
	}
}
