package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/server"
)

// fastGoal ends in a few milliseconds on the simulated phone's home
// screen: one offline check, nothing tapped.
const fastGoal = `check "Settings" exists`

// line is a progress line as the page shows it and /task-progress gives it.
type line struct {
	Seq  int
	Type string
}

// TestFastGoalsInBrowser: a goal that ends before the page has read the
// answer to its POST /execute still shows every progress line the server
// recorded, in order, and then its end — fifty times in a row.
func TestFastGoalsInBrowser(t *testing.T) {
	// Without OCR (each task would start its own Tesseract) the goal reads
	// the UI tree alone.
	p := startPhone(t, &phoneOptions{opts: server.Options{NewAgent: func(_ server.ModelSettings, onEvent func(event.Event)) (agent.AI, error) {
		return agent.New(agent.Config{OnEvent: onEvent, Perception: perceive.Options{Mode: perceive.Off}})
	}}})
	ctx := browserTabFor(t, 5*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the session to be ready", `document.body.dataset.session === "ready" && !document.getElementById("run").disabled`)
	const runs = 50
	shown := map[string][]line{}
	var took []time.Duration
	for i := range runs {
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS("#goal"), fastGoal),
			chromedp.Click(chromedp.CSS("#run")),
		); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, fmt.Sprintf("goal %d to end", i+1), fmt.Sprintf(`document.querySelectorAll("#log .status").length === %d`, i+1))
		id := eval[string](t, ctx, fmt.Sprintf(`document.querySelectorAll("#log .status")[%d].dataset.task`, i))
		v := p.mustDo(200, "GET", "/task-progress/"+id, nil)
		if v["status"] != "done" {
			t.Fatalf("goal %d (%s) ended %v: %v", i+1, id, v["status"], v["error"])
		}
		want, end := serverLines(t, v)
		got := pageLines(t, ctx, id)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("goal %d (%s): the page's progress lines differ from the server's (-want +got):\n%s\npage:\n%s",
				i+1, id, diff, eval[string](t, ctx, `document.getElementById("log").innerText`))
		}
		if last := eval[string](t, ctx, lastOfTask(id)); last != fmt.Sprintf("status %d", end) {
			t.Fatalf("goal %d (%s): the task's last element on the page is %q, want its end (seq %d) after every line", i+1, id, last, end)
		}
		shown[id] = got
		took = append(took, taskDuration(t, v))
		waitFor(t, ctx, "Run to be usable again", `document.body.dataset.session === "ready" && !document.getElementById("run").disabled`)
	}
	// Nothing was added to a task's lines after its end was shown.
	for id, want := range shown {
		if diff := cmp.Diff(want, pageLines(t, ctx, id)); diff != "" {
			t.Errorf("task %s gained lines after its end (-want +got):\n%s", id, diff)
		}
	}
	t.Logf("%d goals, each from first to last progress line in %v", runs, took)
}

// serverLines are the progress lines of a task's view, without its end
// entry, and the end entry's seq.
func serverLines(t *testing.T, v map[string]any) ([]line, int) {
	t.Helper()
	var lines []line
	end := 0
	for _, x := range v["progress"].([]any) {
		pr := x.(map[string]any)
		l := line{Seq: int(pr["seq"].(float64)), Type: pr["type"].(string)}
		if l.Type == "end" {
			end = l.Seq
			continue
		}
		if end != 0 {
			t.Fatalf("progress %v after the end entry (seq %d)", pr, end)
		}
		lines = append(lines, l)
	}
	if end != len(lines)+1 || len(lines) == 0 {
		t.Fatalf("task %v: progress %v, want lines 1…n then the end entry n+1", v["requestId"], v["progress"])
	}
	return lines, end
}

// pageLines are the progress lines the page shows for task id, in order.
func pageLines(t *testing.T, ctx context.Context, id string) []line {
	t.Helper()
	type shown struct {
		Seq  int
		Kind string
	}
	got := eval[[]shown](t, ctx, `Array.from(document.querySelectorAll('#log .progress[data-task=`+jsString(id)+`]')).map(e => ({Seq: Number(e.dataset.seq), Kind: e.querySelector(".kind").textContent}))`)
	lines := []line{}
	for _, s := range got {
		typ, _, _ := strings.Cut(s.Kind, " #")
		lines = append(lines, line{Seq: s.Seq, Type: typ})
	}
	return lines
}

// lastOfTask is a script naming the last element the page shows for task
// id: "status SEQ" for its end, "progress SEQ" for a line.
func lastOfTask(id string) string {
	return `(() => { const all = document.querySelectorAll('#log [data-task=` + jsString(id) + `]'); const e = all[all.length - 1]; return e ? e.className.split(" ")[0] + " " + e.dataset.seq : ""; })()`
}

// taskDuration is the time from a task's first progress line to its end.
func taskDuration(t *testing.T, v map[string]any) time.Duration {
	t.Helper()
	pr := v["progress"].([]any)
	at := func(i int) time.Time {
		ts, err := time.Parse(time.RFC3339Nano, pr[i].(map[string]any)["time"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	return at(len(pr) - 1).Sub(at(0)).Round(time.Millisecond)
}

// TestTaskEndAfterProgress: on GET /events each task's entries come in seq
// order, 1, 2, …, and its end (the task message) is the next seq after its
// last line, whatever the task and however it ends; /task-progress has the
// same entries.
func TestTaskEndAfterProgress(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	ev := p.events()
	if typ, _ := ev.next(t); typ != "session" {
		t.Fatalf("first event %s, want the session", typ)
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status string
	}{
		{"goal", map[string]any{"goal": fastGoal}, "done"},
		{"failing goal", map[string]any{"goal": `check "No Such Thing" exists`}, "failed"},
		{"step", map[string]any{"step": map[string]any{"assert": map[string]any{"exists": "Settings"}}}, "done"},
		{"action", map[string]any{"action": "Home"}, "done"},
		{"goal again", map[string]any{"goal": fastGoal}, "done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["async"] = true
			id := p.mustDo(202, "POST", "/execute", tc.body)["requestId"].(string)
			var streamed []line
			for {
				typ, m := ev.next(t)
				if typ == "session" {
					continue
				}
				if m["requestId"] != id {
					t.Fatalf("%s event of task %v while %s runs", typ, m["requestId"], id)
				}
				pr := m["progress"].(map[string]any)
				l := line{Seq: int(pr["seq"].(float64)), Type: pr["type"].(string)}
				if l.Seq != len(streamed)+1 {
					t.Fatalf("entry %v after %d entries, want seq %d", pr, len(streamed), len(streamed)+1)
				}
				streamed = append(streamed, l)
				if (typ == "task") != (l.Type == "end") {
					t.Fatalf("%s event with entry %v: the end entry comes as the task event, and only it", typ, pr)
				}
				if typ == "task" {
					if st := m["task"].(map[string]any)["status"]; st != tc.status || pr["status"] != tc.status {
						t.Errorf("task ended %v (end entry %v), want %s", st, pr["status"], tc.status)
					}
					break
				}
			}
			if len(streamed) < 2 {
				t.Errorf("entries %v: want progress lines before the end", streamed)
			}
			v := p.mustDo(200, "GET", "/task-progress/"+id, nil)
			lines, end := serverLines(t, v)
			if diff := cmp.Diff(streamed, append(lines, line{Seq: end, Type: "end"})); diff != "" {
				t.Errorf("/task-progress differs from the stream (-stream +task-progress):\n%s", diff)
			}
			// Past the last line, /task-progress answers the end alone.
			v = p.mustDo(200, "GET", fmt.Sprintf("/task-progress/%s?since=%d", id, end-1), nil)
			if pr := v["progress"].([]any); len(pr) != 1 || pr[0].(map[string]any)["type"] != "end" {
				t.Errorf("since=%d: %v, want the end entry alone", end-1, pr)
			}
		})
	}
}
