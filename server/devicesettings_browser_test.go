package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/chromedp/chromedp"
)

// TestDeviceSettingsPanel: the playground lists the session's settings,
// sets dark mode from its panel and shows the value the phone reports;
// a refused value shows the device's error.
func TestDeviceSettingsPanel(t *testing.T) {
	p := startPhone(t, nil)
	// A setting observes the screen before and after, as every action
	// does: slow under the race detector on a loaded machine.
	ctx := browserTabFor(t, 3*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the session to be ready", `document.body.dataset.session === "ready"`)
	waitFor(t, ctx, "the settings panel", `document.querySelectorAll("#device-settings .setting-row").length > 0`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#device-settings summary"))); err != nil {
		t.Fatal(err)
	}
	names := eval[string](t, ctx, `[...document.querySelectorAll("#device-settings .setting-row")].map(r => r.dataset.action).join(",")`)
	for _, want := range []string{"SetAppearance", "SetLocale", "SetRotation", "SetBattery"} {
		if !strings.Contains(names, want) {
			t.Errorf("the panel lists %s; want %s among them", names, want)
		}
	}
	if strings.Contains(names, "Tap") {
		t.Errorf("the panel lists actions that are not settings: %s", names)
	}

	row := `#device-settings .setting-row[data-action="SetAppearance"]`
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(row+` select[name="appearance"]`), "dark"),
		chromedp.Click(chromedp.CSS(row+" button")),
	); err != nil {
		t.Fatal(err)
	}
	waitLong(t, ctx, "the read-back", `document.querySelector('`+row+` .setting-answer').textContent.includes('"dark":true')`)
	if !p.dev.Phone.NightMode() {
		t.Error("the panel's Set left the phone in light mode")
	}

	row = `#device-settings .setting-row[data-action="SetTimeZone"]`
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(row+` input[name="timeZone"]`), "../etc"),
		chromedp.Click(chromedp.CSS(row+" button")),
	); err != nil {
		t.Fatal(err)
	}
	waitLong(t, ctx, "the refusal", `document.querySelector('`+row+` .setting-answer').classList.contains('bad')`)
	if got := eval[string](t, ctx, `document.querySelector('`+row+` .setting-answer').textContent`); !strings.Contains(got, "time zone") {
		t.Errorf("the refusal reads %q; want it to say why", got)
	}
}

// waitLong is waitFor for what runs a device action: a minute (stretched
// by patience).
func waitLong(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	if err := chromedp.Do(ctx, void(chromedp.Poll[bool](js, chromedp.WithPollingTimeout(patience.Of(time.Minute))))); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
