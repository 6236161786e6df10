package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/chromedp/chromedp"

	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/console"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
)

// TestConsoleListsAndOpensRecords: runs on a real host leave records; the
// console lists those of the projects the user is a member of (filtered),
// serves a report with its screenshots, and answers 404 for another
// project's record. In a real browser the list shows the run and its
// report opens.
func TestConsoleListsAndOpensRecords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	_, js := p.Conn()
	q := farmtest.Queue(ctx, t, p)
	script := "sim:\n  launch: com.apex.settings\ntasks:\n  - name: wifi\n    flow:\n      - tap: Network & internet\n"
	ids := map[string]string{}
	for _, project := range []string{"shop", "bank"} {
		ids[project] = farmtest.RunToEnd(ctx, t, q, queue.Run{Project: project, Name: "wifi.yaml", Script: []byte(script)}).ID
	}
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	// alice is a member of shop only.
	alice := farmtest.Users(ctx, t, p, []string{"shop", "bank"}, farmtest.Member{User: "alice", Role: auth.Viewer, Projects: []string{"shop"}})["alice"]
	c, err := console.New(cctx, js, console.Options{Token: "the-farm-admin-token"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	defer srv.Close()
	get := func(path string) (int, string, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+alice)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), body
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{ids["shop"]}}, // bank's is not the user's
		{"?project=shop&state=passed&since=1h", []string{ids["shop"]}},
		{"?state=failed", nil},
		{"?project=bank", nil},
	} {
		code, _, body := get("/api/records" + tc.query)
		var runs []queue.Run
		if code != http.StatusOK || json.Unmarshal(body, &runs) != nil {
			t.Fatalf("/api/records%s: %d %s", tc.query, code, body)
		}
		var got []string
		for _, r := range runs {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("/api/records%s lists %v, want %v", tc.query, got, tc.want)
		}
	}
	if code, _, body := get("/api/runs"); code != http.StatusOK || !strings.Contains(string(body), ids["shop"]) || strings.Contains(string(body), ids["bank"]) {
		t.Errorf("/api/runs: %d, want shop's run and not bank's:\n%s", code, body)
	}
	if code, _, body := get("/api/records?since=yesterday"); code != http.StatusBadRequest {
		t.Errorf("a bad since: %d %s, want 400", code, body)
	}
	code, ct, body := get("/records/" + ids["shop"] + "/report.html")
	if code != http.StatusOK || !strings.HasPrefix(ct, "text/html") || !strings.Contains(string(body), "wifi") {
		t.Errorf("the report: %d %s\n%.200s", code, ct, body)
	}
	rs, err := records.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	run, _ := rs.Run(ctx, ids["shop"])
	files, _ := rs.Files(ctx, run)
	i := slices.IndexFunc(files, func(f string) bool { return strings.HasSuffix(f, ".png") })
	if i < 0 {
		t.Fatalf("no screenshot in the record: %v", files)
	}
	if code, ct, _ := get("/records/" + ids["shop"] + "/" + files[i]); code != http.StatusOK || ct != "image/png" {
		t.Errorf("a screenshot of the report: %d %s", code, ct)
	}
	if code, _, _ := get("/records/" + ids["bank"] + "/report.html"); code != http.StatusNotFound {
		t.Errorf("another project's report: %d, want 404", code)
	}

	tab := chromium.Tab(t, 60*time.Second, "the console lists a run's record and opens its report")
	row := `#records tr[data-id="` + ids["shop"] + `"] a`
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/?token="+alice), chromedp.WaitVisible(chromedp.CSS(row))); err != nil {
		t.Fatal(err)
	}
	href, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('`+row+`').href`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(href)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil || !strings.Contains(text, "wifi") {
		t.Errorf("the report opened from the list: %v\n%.300s", err, text)
	}
}
