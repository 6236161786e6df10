package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/store"
)

// Params, results and errors are shown inline up to a per-step cap that
// shrinks with the run's length, so that together they stay under
// inlineTextBudget bytes of HTML; the step's JSON file always has them whole.
const (
	inlineTextBudget = 384 << 10
	minInlineText    = 256
	maxInlineText    = 4 << 10
)

func textCap(steps int) int {
	if steps == 0 {
		return maxInlineText
	}
	return min(max(inlineTextBudget/(3*steps), minInlineText), maxInlineText)
}

type page struct {
	Run                               store.Run
	Duration                          time.Duration
	Passed, Failed, Canceled, Skipped int
	Steps                             []*stepView
	Tasks                             []*taskView
	FirstFailure                      *stepView
	LastStep                          *stepView
	LazyScenes                        bool
	// Model is the run's AI steps' model use; nil when it had none.
	Model *modelUse
	// Goals are the run's agent tasks, from their events.
	Goals []*goalView
}

type taskView struct {
	Name  string
	Steps []*stepView
}

type stepView struct {
	store.Step
	Anchor     string
	Offset     time.Duration // since the run started
	Overhead   time.Duration // step time not spent on the device
	HasDevice  bool
	Params     string
	Result     string
	Error      string // shadows Step.Error: cut to fit
	Truncated  bool
	Before     *shot
	After      *shot
	Scene      *sceneView
	SceneBytes int
	JSONPath   string
}

type shot struct {
	Label         string // "before" or "after"
	Src           template.URL
	Full          string // the PNG file, linked from an embedded image
	Width, Height int
	Mark          bool
	Left, Top     template.CSS // the touched point, in % of the image
}

type sceneView struct {
	Width, Height int
	Package       string
	Elements      []elementView
	Dropped       string
	Raw           string // when the Scene is not in the known shape
}

type elementView struct {
	ID, Type, Label, ResourceID, Bounds, Flags string
}

func buildPage(run store.Run, steps []store.Step, sceneBudget int, inline bool) *page {
	p := &page{Run: run}
	if !run.Ended.IsZero() {
		p.Duration = run.Ended.Sub(run.Started)
	} else if n := len(steps); n > 0 {
		last := steps[n-1]
		p.Duration = last.Started.Add(last.Duration).Sub(run.Started) // recorded so far
	}
	total := 0
	for _, st := range steps {
		total += len(st.Scene)
	}
	p.LazyScenes = sceneBudget < 0 || total > sceneBudget
	limit := textCap(len(steps))
	var task *taskView
	for _, st := range steps {
		v := buildStep(run, st, !p.LazyScenes, limit)
		p.Steps = append(p.Steps, v)
		switch st.Status {
		case store.StepPassed:
			p.Passed++
		case store.StepFailed:
			p.Failed++
			if p.FirstFailure == nil {
				p.FirstFailure = v
			}
		case store.StepCanceled:
			p.Canceled++
		default:
			p.Skipped++
		}
		if task == nil || task.Name != st.Task {
			task = &taskView{Name: st.Task}
			p.Tasks = append(p.Tasks, task)
		}
		task.Steps = append(task.Steps, v)
		p.LastStep = v
	}
	if inline {
		embedAll(run.Dir, p.Steps)
	}
	return p
}

func buildStep(run store.Run, st store.Step, inlineScene bool, limit int) *stepView {
	v := &stepView{
		Step:       st,
		Anchor:     "step-" + strconv.Itoa(st.Index),
		Offset:     st.Started.Sub(run.Started),
		HasDevice:  st.DeviceTime > 0,
		JSONPath:   st.JSONPath(),
		SceneBytes: len(st.Scene),
	}
	if st.DeviceTime > 0 && st.Duration > st.DeviceTime {
		v.Overhead = st.Duration - st.DeviceTime
	}
	var sw, sh int // the Scene's coordinate space, when known
	var sc scene.Scene
	sceneOK := len(st.Scene) > 0 && json.Unmarshal(st.Scene, &sc) == nil
	if sceneOK {
		sw, sh = sc.Width, sc.Height
	}
	var cut [3]bool
	v.Params, cut[0] = cutEscaped(prettyJSON(st.Params), limit)
	v.Result, cut[1] = cutEscaped(prettyJSON(st.Result), limit)
	v.Error, cut[2] = cutEscaped(st.Error, max(limit, maxInlineText/2))
	v.Truncated = cut[0] || cut[1] || cut[2]
	v.Before = newShot("before", run.Dir, st.BeforePath, st, sw, sh)
	v.After = newShot("after", run.Dir, st.AfterPath, st, sw, sh)
	if inlineScene && len(st.Scene) > 0 {
		if sceneOK {
			v.Scene = newSceneView(&sc)
		} else {
			v.Scene = &sceneView{Raw: string(st.Scene)}
		}
	}
	return v
}

// newShot describes a screenshot file. Its size comes from the PNG header
// alone, so no image is decoded or re-encoded; the touched point is placed
// in percent of the device's coordinate space (the Scene's when known).
func newShot(label, dir, rel string, st store.Step, sw, sh int) *shot {
	if rel == "" {
		return nil
	}
	s := &shot{Label: label, Src: template.URL(filepath.ToSlash(rel))}
	if f, err := os.Open(filepath.Join(dir, rel)); err == nil {
		if cfg, err := png.DecodeConfig(f); err == nil {
			s.Width, s.Height = cfg.Width, cfg.Height
		}
		f.Close()
	}
	if sw <= 0 || sh <= 0 {
		sw, sh = s.Width, s.Height
	}
	if st.Point != nil && sw > 0 && sh > 0 {
		s.Mark = true
		s.Left = percent(st.Point.X, sw)
		s.Top = percent(st.Point.Y, sh)
	}
	return s
}

func percent(v, of int) template.CSS {
	f := float64(v) * 100 / float64(of)
	f = min(max(f, 0), 100)
	return template.CSS(strconv.FormatFloat(f, 'f', 2, 64) + "%")
}

func newSceneView(sc *scene.Scene) *sceneView {
	v := &sceneView{Width: sc.Width, Height: sc.Height, Package: sc.Package, Dropped: sc.Dropped}
	for _, e := range sc.Elements {
		label := e.Text
		if e.Desc != "" && e.Desc != e.Text {
			if label != "" {
				label += " · "
			}
			label += e.Desc
		}
		b := e.Bounds
		v.Elements = append(v.Elements, elementView{
			ID: e.ID, Type: e.Type, Label: label, ResourceID: e.ResourceID,
			Bounds: fmt.Sprintf("[%d,%d][%d,%d]", b.X0, b.Y0, b.X1, b.Y1),
			Flags:  flagString(e.Flags),
		})
	}
	return v
}

func flagString(f scene.Flags) string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{
		{f.Clickable, "click"}, {f.LongClickable, "long"}, {f.Checkable, "check"}, {f.Checked, "checked"},
		{f.Editable, "edit"}, {f.Scrollable, "scroll"}, {f.Selected, "selected"}, {f.Focused, "focused"},
		{f.Disabled, "disabled"}, {f.Password, "password"},
	} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return strings.Join(out, " ")
}

// prettyJSON indents raw for reading.
func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// cutEscaped shortens s so that, once html/template has escaped it, it takes
// at most limit bytes (plus the ellipsis), and reports whether it cut.
func cutEscaped(s string, limit int) (string, bool) {
	n := 0
	for i, r := range s {
		switch r {
		case '"', '\'', '&':
			n += 5 // &#34; &#39; &amp;
		case '<', '>':
			n += 4
		default:
			n += utf8.RuneLen(r)
		}
		if n > limit {
			return s[:i] + "…", true
		}
	}
	return s, false
}

// formatDuration prints a duration the way a person reads a timeline.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + formatDuration(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
