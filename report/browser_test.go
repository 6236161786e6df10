package report

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/browsertest"
	"github.com/apexagent/apex/internal/patience"
	"github.com/chromedp/chromedp"
)

// chromium is the one headless chromium of this package's tests.
var chromium browsertest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	chromium.Close()
	os.Exit(code)
}

// browser returns a new tab of the package's chromium, or skips the test
// when it is absent.
func browser(t *testing.T) context.Context {
	t.Helper()
	return chromium.Tab(t, 40*time.Second, "open reports in a real browser")
}

// void drops an action's value so it can run among other steps.
func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, t)
		return chromedp.Void{}, err
	}
}

type imgState struct {
	Src      string `json:"src"`
	Complete bool   `json:"complete"`
	Width    int    `json:"w"`
}

type pageState struct {
	Steps    []string   `json:"steps"`
	Images   []imgState `json:"images"`
	Marks    int        `json:"marks"`
	Timeline int        `json:"timeline"`
	Title    string     `json:"title"`
}

// Scroll through the page, then force lazy images to load, so every image
// is fetched whether or not it was ever in view.
const loadAll = `(() => {
	for (const s of document.querySelectorAll("section.step")) s.scrollIntoView();
	for (const img of document.images) img.loading = "eager";
	window.scrollTo(0, document.body.scrollHeight);
	return true;
})()`

const allLoaded = `Array.from(document.images).every(i => i.complete)`

const state = `({
	steps: Array.from(document.querySelectorAll("section.step")).map(s => s.id),
	images: Array.from(document.images).map(i => ({src: i.getAttribute("src"), complete: i.complete, w: i.naturalWidth})),
	marks: document.querySelectorAll(".shot .mark").length,
	timeline: document.querySelectorAll("#timeline a.c").length,
	title: document.title,
})`

func TestReportInBrowser(t *testing.T) {
	const n = 24
	s, id := makeRun(t, t.TempDir(), synth{steps: n, failAt: 20, finish: true})
	path, err := Write(context.Background(), s, id)
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	err = chromedp.Do(ctx,
		chromedp.Navigate("file://"+filepath.ToSlash(path)),
		chromedp.WaitVisible(chromedp.CSS("#timeline")),
		void(chromedp.Evaluate[bool](loadAll)),
		void(chromedp.Poll[bool](allLoaded, chromedp.WithPollingTimeout(patience.Of(20*time.Second)))),
	)
	if err != nil {
		t.Fatalf("open %s in chromium: %v", path, err)
	}
	st, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](state))
	if err != nil {
		t.Fatalf("open %s in chromium: %v", path, err)
	}
	if len(st.Steps) != n || st.Timeline != n {
		t.Fatalf("page shows %d step sections and %d timeline entries; want %d", len(st.Steps), st.Timeline, n)
	}
	for i, sid := range st.Steps {
		if want := fmt.Sprintf("step-%d", i+1); sid != want {
			t.Errorf("section %d is %q; want %q", i, sid, want)
		}
	}
	if len(st.Images) < n {
		t.Fatalf("page has %d images; want at least %d", len(st.Images), n)
	}
	for _, img := range st.Images {
		if !img.Complete || img.Width <= 0 {
			t.Errorf("image %s did not load (complete %v, naturalWidth %d)", img.Src, img.Complete, img.Width)
		}
	}
	if st.Marks == 0 {
		t.Error("no touched point is marked")
	}
	if st.Title == "" {
		t.Error("page has no title")
	}

	// The "only failed" filter leaves the failed step alone on screen.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#only-failed"))); err != nil {
		t.Fatal(err)
	}
	visible, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("section.step")).filter(s => s.offsetParent !== null).map(s => s.id)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(visible) != 1 || visible[0] != "step-20" {
		t.Errorf("with only failed steps shown, visible = %v; want [step-20]", visible)
	}
}

// In a long run Scenes are not inline; opening one loads it from its file.
func TestLazySceneInBrowser(t *testing.T) {
	s, id := makeRun(t, t.TempDir(), synth{steps: 3, finish: true})
	path, err := WriteWith(context.Background(), s, id, &Options{InlineSceneBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	err = chromedp.Do(ctx,
		chromedp.Navigate("file://"+filepath.ToSlash(path)),
		chromedp.Click(chromedp.CSS("#step-2 details.lazy summary")),
		chromedp.WaitReady(chromedp.CSS("#step-2 details.lazy iframe")),
	)
	if err != nil {
		t.Fatalf("open a lazy Scene: %v", err)
	}
	src, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#step-2 details.lazy iframe").getAttribute("src")`))
	if err != nil {
		t.Fatalf("open a lazy Scene: %v", err)
	}
	if src != "steps/0002-scene.json" {
		t.Errorf("Scene frame src = %q; want steps/0002-scene.json", src)
	}
}

// The "Open in playground" buttons appear only where a playground serves
// the report (report pages served by the playground are tested in package
// server); opened as a file, or from a plain web server, there are none.
func TestNoPlaygroundButtonsElsewhere(t *testing.T) {
	s, id := makeRun(t, t.TempDir(), synth{steps: 3, finish: true})
	path, err := Write(context.Background(), s, id)
	if err != nil {
		t.Fatal(err)
	}
	files := httptest.NewServer(http.FileServer(http.Dir(s.RunDir(id))))
	defer files.Close()
	ctx := browser(t)
	for _, u := range []string{"file://" + filepath.ToSlash(path), files.URL + "/" + FileName} {
		// The page asks a web server for /status; a file asks nothing.
		checked := `document.body.dataset.playgroundChecked === "1"`
		if strings.HasPrefix(u, "file:") {
			checked = `document.body.dataset.playground === "no"`
		}
		err := chromedp.Do(ctx,
			chromedp.Navigate(u),
			chromedp.WaitVisible(chromedp.CSS("#step-3")),
			void(chromedp.Poll[bool](checked, chromedp.WithPollingTimeout(patience.Of(10*time.Second)))),
		)
		if err != nil {
			t.Fatalf("open %s: %v", u, err)
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("button.pg").length`))
		if err != nil {
			t.Fatal(err)
		}
		if pg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.playground`)); n != 0 || pg != "no" {
			t.Errorf("%s shows %d Open in playground buttons (playground %q); want none", u, n, pg)
		}
	}
}
