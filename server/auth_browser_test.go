package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/apexagent/apex/server"
)

// A browser opens the URL apex playground prints for a server with a
// token: it lands on the page without the token in the address bar, and
// the page works through its cookie alone. A browser without the token
// gets the page that says what to open.
func TestTokenInBrowser(t *testing.T) {
	p := startPhone(t, &phoneOptions{opts: server.Options{Token: testToken}})
	ctx := browserTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/?token="+testToken)); err != nil {
		t.Fatal(err)
	}
	loc := eval[string](t, ctx, `location.href`)
	if loc != p.http.URL+"/" {
		t.Errorf("after GET /?token= the address is %q, want %q (the token out of the address bar)", loc, p.http.URL+"/")
	}
	if title := eval[string](t, ctx, `document.title`); title != "Apex playground" {
		t.Fatalf("title %q, want the playground page; body:\n%s", title, eval[string](t, ctx, `document.body.innerText`))
	}
	if c := eval[string](t, ctx, `document.cookie`); c != "" {
		t.Errorf("the page's script reads cookies %q; the sign-in cookie must be HttpOnly", c)
	}
	// Its API calls, event stream and preview image go through the cookie.
	waitFor(t, ctx, "the session to be ready", `document.body.dataset.session === "ready" && !document.getElementById("run").disabled`)
	waitFor(t, ctx, "the preview to show the screen", `window.apexPreview.shown()`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#home"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "Home to be done", `document.querySelector("#log .msg.manual") && document.querySelector("#log .msg.manual").textContent.includes("✓")`)

	// A fresh profile, without the token.
	other := browserTab(t)
	if err := chromedp.Do(other, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if title := eval[string](t, other, `document.title`); title == "Apex playground" {
		t.Fatal("a browser without the token sees the playground page")
	}
	body := eval[string](t, other, `document.body.innerText`)
	if !strings.Contains(body, "apex playground") || !strings.Contains(body, "?token=") || strings.Contains(body, testToken) {
		t.Errorf("the page for a browser without the token says:\n%s\nwant: open the URL apex playground printed, with its ?token=", body)
	}
	// A wrong token signs nothing in.
	if err := chromedp.Do(other, chromedp.Navigate(p.http.URL+"/?token=guess")); err != nil {
		t.Fatal(err)
	}
	if body := eval[string](t, other, `document.body.innerText`); !strings.Contains(body, "wrong token") {
		t.Errorf("after a wrong ?token= the page says:\n%s", body)
	}
	if err := chromedp.Do(other, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if title := eval[string](t, other, `document.title`); title == "Apex playground" {
		t.Error("a wrong ?token= signed the browser in")
	}
}
