package records_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
	"github.com/apexagent/apex/internal/patience"
)

const wifi = `sim:
  launch: com.apex.settings
tasks:
  - name: wifi
    flow:
      - tap: Network & internet
      - assert: {checked: {id: wifi}}
`

// TestRecordsPerProjectWithRetention: a real host uploads each run's
// record into its project's store; the records list by filter, open
// (report, screenshots), and the plane's retention deletes the ones a
// project no longer keeps, by count and by age, leaving other projects'.
func TestRecordsPerProjectWithRetention(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	_, js := p.Conn()
	q := farmtest.Queue(ctx, t, p)
	rs, err := records.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, project := range []string{"shop", "shop", "shop", "bank"} {
		// One at a time, so the records' ages are in queue order.
		r := farmtest.RunToEnd(ctx, t, q, queue.Run{Project: project, Name: "wifi.yaml", Script: []byte(wifi), Labels: map[string]string{"platform": "android"}})
		ids = append(ids, r.ID)
	}
	list := func(f records.Filter) []string {
		t.Helper()
		runs, err := rs.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    records.Filter
		want []string
	}{
		{"project", records.Filter{Project: "shop"}, []string{ids[2], ids[1], ids[0]}},
		{"state", records.Filter{State: queue.Passed}, []string{ids[3], ids[2], ids[1], ids[0]}},
		{"state none", records.Filter{State: queue.Failed}, nil},
		{"label", records.Filter{Project: "bank", Labels: map[string]string{"platform": "android"}}, []string{ids[3]}},
		{"label none", records.Filter{Labels: map[string]string{"platform": "ios"}}, nil},
		{"since", records.Filter{Since: time.Now().Add(time.Hour)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, list(tc.f)); diff != "" {
				t.Errorf("runs with records (-want +got):\n%s", diff)
			}
		})
	}

	r, err := rs.Run(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	files, err := rs.Files(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "report.html") || !slices.ContainsFunc(files, func(f string) bool { return strings.HasSuffix(f, ".png") }) {
		t.Errorf("the record has no report or no screenshot: %v", files)
	}
	res, err := rs.Get(ctx, r, "report.html")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res)
	res.Close()
	if !strings.Contains(string(page), "wifi") {
		t.Errorf("the report does not name its task:\n%.300s", page)
	}
	if _, err := rs.Get(ctx, r, "../"+ids[1]+"/report.html"); err == nil {
		t.Errorf("a file name reaching into another run's record was served")
	}
	dir := t.TempDir()
	got, err := rs.Download(ctx, r, dir)
	if err != nil || len(got) != len(files) {
		t.Fatalf("download: %d files, %v; want %d", len(got), err, len(files))
	}

	// By count: shop keeps its newest record.
	if err := rs.SetRetention(ctx, "shop", records.Retention{MaxCount: 1}); err != nil {
		t.Fatal(err)
	}
	deleted, err := rs.Enforce(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(deleted)
	if diff := cmp.Diff([]string{ids[0], ids[1]}, deleted); diff != "" {
		t.Errorf("deleted by count (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ids[3], ids[2]}, list(records.Filter{})); diff != "" {
		t.Errorf("records left (-want +got):\n%s", diff)
	}
	if _, err := rs.Run(ctx, ids[0]); err == nil {
		t.Errorf("run %s still names a deleted record", ids[0])
	}
	// By age: a day later, shop (kept an hour) loses its last record,
	// bank (the default 30 days) keeps its own.
	if err := rs.SetRetention(ctx, "shop", records.Retention{MaxAge: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if deleted, err = rs.Enforce(ctx, time.Now().Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{ids[2]}, deleted); diff != "" {
		t.Errorf("deleted by age (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ids[3]}, list(records.Filter{})); diff != "" {
		t.Errorf("records left (-want +got):\n%s", diff)
	}
}

func TestParseFilter(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		labels, since string
		want          records.Filter
		err           bool
	}{
		{"", "", records.Filter{Project: "p"}, false},
		{"platform=android,lab=x", "24h", records.Filter{Project: "p", Labels: map[string]string{"platform": "android", "lab": "x"}, Since: now.Add(-24 * time.Hour)}, false},
		{"", "2026-01-01T00:00:00Z", records.Filter{Project: "p", Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
		{"platform", "", records.Filter{}, true},
		{"", "yesterday", records.Filter{}, true},
	} {
		got, err := records.ParseFilter("p", "", tc.labels, tc.since, now)
		if (err != nil) != tc.err {
			t.Errorf("ParseFilter(%q, %q): err %v, want error %v", tc.labels, tc.since, err, tc.err)
			continue
		}
		if err == nil {
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseFilter(%q, %q) (-want +got):\n%s", tc.labels, tc.since, diff)
			}
		}
	}
}
