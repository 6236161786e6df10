package report

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apexagent/apex/event"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		sy   synth
		opts *Options
	}{
		{"passed", synth{steps: 3, finish: true, tasks: []string{"search"}}, nil},
		{"failed", synth{steps: 7, failAt: 5, finish: true}, nil},
		{"crashed", synth{steps: 4}, &Options{InlineSceneBytes: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, id := makeRun(t, t.TempDir(), tt.sy)
			path, err := WriteWith(context.Background(), s, id, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tt.name+".golden.html")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./report -run TestGolden -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("report differs from %s (-want +got); if intended, rerun with -update:\n%s", golden, diff)
			}
		})
	}
}

// The report says what the run was, where it failed and why, and escapes
// what the script and device wrote.
func TestContent(t *testing.T) {
	s, id := makeRun(t, t.TempDir(), synth{steps: 7, failAt: 5, finish: true})
	path, err := Write(context.Background(), s, id)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != FileName || filepath.Dir(path) != s.RunDir(id) {
		t.Errorf("path = %s; want %s/%s", path, s.RunDir(id), FileName)
	}
	data, _ := os.ReadFile(path)
	html := string(data)
	for _, want := range []string{
		`examples/shop-checkout.yaml`, `sim/127.0.0.1:5555 (android)`, `b-failed">failed`,
		`step 5: element &#34;Checkout&#34; not found`, // the run's reason
		`href="#step-5"`, `id="step-7"`, `4 passed, 1 failed, 2 skipped`,
		`tap &#34;Add to cart 1&#34; &lt;b&gt;`,   // names are escaped
		`Shop &lt;home&gt; &amp; &#34;deals&#34;`, // so are Scene texts
		`src="steps/0001-before.png"`, `loading="lazy"`, `width="108" height="240"`,
		`style="left:50.00%;top:50.00%"`, // (540,1200) on a 1080x2400 screen
		`href="steps/0001.json"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"<b>", "http://", "https://", "base64"} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q", bad)
		}
	}
	// Every referenced file exists.
	for _, m := range regexp.MustCompile(`(?:src|href|data-src)="(steps/[^"]+)"`).FindAllStringSubmatch(html, -1) {
		if _, err := os.Stat(filepath.Join(s.RunDir(id), m[1])); err != nil {
			t.Errorf("report references a missing file: %v", err)
		}
	}
}

func TestUnknownRun(t *testing.T) {
	s, _ := makeRun(t, t.TempDir(), synth{steps: 1})
	if _, err := Write(context.Background(), s, "no-such-run"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("Write(unknown) err = %v", err)
	}
}

// A 500-step run stays a small page: images are files, Scenes load on
// demand, and the HTML is bounded even when every step is as large as real
// ones get.
func TestLongRunSize(t *testing.T) {
	s, id := makeRun(t, t.TempDir(), synth{steps: 500, failAt: 480, finish: true, heavy: true})
	path, err := Write(context.Background(), s, id)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("500-step report: %d bytes of HTML", fi.Size())
	if fi.Size() > 2<<20 {
		t.Fatalf("500-step report is %d bytes of HTML; want <= 2 MiB", fi.Size())
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), `<section class="step`); n != 500 {
		t.Errorf("report has %d step sections; want 500", n)
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{{"900us", "900µs"}, {"120ms", "120ms"}, {"1.5s", "1.50s"}, {"62s", "1m02s"}, {"3700s", "1h01m"}, {"-2ms", "-2ms"}} {
		d, _ := parseDuration(tt.in)
		if got := formatDuration(d); got != tt.want {
			t.Errorf("formatDuration(%s) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func parseDuration(s string) (d time.Duration, err error) { return time.ParseDuration(s) }

// TestModelUse: the tokens the run's AI steps spent (model_call events of
// its tasks) are summed in the header; other runs' tasks are not counted.
func TestModelUse(t *testing.T) {
	ctx := context.Background()
	s, id := makeRun(t, t.TempDir(), synth{steps: 2, finish: true})
	for i, e := range []event.Event{
		{TaskID: id + "/act-1", ActionType: "task_started", Status: "ok"},
		{TaskID: id + "/act-1", ActionType: "model_call", Status: "ok", Payload: json.RawMessage(`{"role":"planner","prompt_tokens":900,"usage":{"prompt_tokens":950,"completion_tokens":120}}`)},
		{TaskID: id + "/act-2", ActionType: "model_call", Status: "ok", Payload: json.RawMessage(`{"role":"executor","prompt_tokens":400,"usage":{}}`)},
		{TaskID: id + "x/act-3", ActionType: "model_call", Status: "ok", Payload: json.RawMessage(`{"prompt_tokens":7}`)},
	} {
		e.ID = fmt.Sprint("e", i)
		if err := s.AddEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	path, err := Write(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if want := "<dt>AI</dt><dd>2 tasks, 2 model calls, 1350 prompt + 120 completion tokens</dd>"; !strings.Contains(string(data), want) {
		t.Errorf("report lacks %q", want)
	}
}
