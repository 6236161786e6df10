package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/browsertest"
	"github.com/apexagent/apex/report"
	"github.com/chromedp/chromedp"
)

// apex run --report inline leaves one HTML file that shows every
// screenshot when copied alone to another directory.
func TestRunInlineReportStandsAlone(t *testing.T) {
	browsertest.Require(t, "open an inline report copied alone")
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.json")
	out, errOut, err := run(t, "run", "--sim", "--report", "inline", "--summary", summary, "--report-dir", filepath.Join(dir, "runs"),
		"../examples/shop-checkout.yaml")
	if err != nil {
		t.Fatalf("apex run: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	sc := readSummary(t, summary).Scripts[0]
	page, err := os.ReadFile(sc.Report)
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(t.TempDir(), "mailed.html")
	if err := os.WriteFile(alone, page, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx := chromium.Tab(t, 40*time.Second, "open an inline report copied alone")
	type img struct {
		Src      string `json:"src"`
		Complete bool   `json:"complete"`
		Width    int    `json:"w"`
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.ToSlash(alone)), chromedp.WaitVisible(chromedp.CSS("#timeline"))); err != nil {
		t.Fatalf("open %s in chromium: %v", alone, err)
	}
	imgs, err := chromedp.Run(ctx, chromedp.Evaluate[[]img](`(async () => {
			for (const i of document.images) { i.loading = "eager"; }
			await Promise.all(Array.from(document.images).map(i => i.decode().catch(() => null)));
			return Array.from(document.images).map(i => ({src: i.getAttribute("src").slice(0, 40), complete: i.complete, w: i.naturalWidth}));
		})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("open %s in chromium: %v", alone, err)
	}
	if want := sc.Steps["total"]; len(imgs) < want {
		t.Fatalf("the report shows %d screenshots for %d steps", len(imgs), want)
	}
	for _, i := range imgs {
		if !strings.HasPrefix(i.Src, "data:image/jpeg;base64,") || !i.Complete || i.Width == 0 {
			t.Errorf("screenshot %s…: complete %v, naturalWidth %d; want an embedded JPEG shown", i.Src, i.Complete, i.Width)
		}
	}
	if filepath.Base(sc.Report) != report.FileName {
		t.Errorf("report %s: want %s in the run directory", sc.Report, report.FileName)
	}
}

// apex run --output FILE writes the script's results as Midscene does:
// each aiLocate, query and named runAdbShell result by its name.
func TestRunOutputFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "results.yaml")
	script := "sim:\n  platform: android\ntasks:\n  - name: results\n    flow:\n" +
		"      - aiLocate: Settings\n        name: settings\n" +
		"      - runAdbShell: getprop ro.product.model\n        name: model\n"
	if err := os.WriteFile(src, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "out", "results.json")
	if err := os.MkdirAll(filepath.Dir(results), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "run", "--sim", "--output", results, "--report-dir", filepath.Join(dir, "runs"), src)
	if err != nil {
		t.Fatalf("apex run: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	data, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil || got["settings"] == nil || got["model"] != "Apex Sim\n" {
		t.Errorf("results = %s (%v), want settings' place and the model", data, err)
	}
	if _, _, err := run(t, "run", "--sim", "--output", results, src, src); err == nil {
		t.Error("--output with two scripts: want an error")
	}
}
