package agent

import (
	"context"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/internal/lazy"
	"github.com/apexagent/apex/scene"
)

// slowAction is how long an action may take before the tracer reports it.
const slowAction = 3 * time.Second

// tracer watches the device between steps: the foreground app (from the
// Scene), crashes and ANRs (from logcat), the keyboard (from dumpsys) and
// how long actions took.
type tracer struct {
	shell    func(ctx context.Context, cmd string) (string, error) // nil: no logcat
	app      string
	keyboard bool
	lastLine string // the newest logcat line already read
	started  bool
}

func newTracer(d device.Driver) *tracer {
	t := &tracer{}
	if s, ok := d.(device.Sheller); ok {
		t.shell = s.Shell
	}
	return t
}

const traceCmd = "logcat -d -v threadtime -t 400; echo __APEX_IME__; dumpsys input_method | grep mInputShown"

// start takes the baseline: lines already in the log are not news.
func (t *tracer) start(ctx context.Context, s *scene.Scene) {
	if s != nil {
		t.app = s.Package
	}
	if t.shell == nil {
		return
	}
	out, err := t.shell(ctx, traceCmd)
	if err != nil {
		return
	}
	lines, kb := splitTrace(out)
	if len(lines) > 0 {
		t.lastLine = lines[len(lines)-1]
	}
	t.keyboard = kb
	t.started = true
}

// poll reports what changed since the last poll.
func (t *tracer) poll(ctx context.Context, s *scene.Scene, took time.Duration) []event.Signal {
	var out []event.Signal
	if s != nil && s.Package != "" && s.Package != t.app {
		out = append(out, event.Signal{Kind: event.SigForeground, App: s.Package, From: t.app})
		t.app = s.Package
	}
	if took > slowAction {
		out = append(out, event.Signal{Kind: event.SigSlow, Detail: took.Round(time.Millisecond).String()})
	}
	if t.shell == nil || !t.started {
		return out
	}
	res, err := t.shell(ctx, traceCmd)
	if err != nil {
		return out
	}
	lines, kb := splitTrace(res)
	fresh := lines
	if t.lastLine != "" {
		for i := len(lines) - 1; i >= 0; i-- {
			if lines[i] == t.lastLine {
				fresh = lines[i+1:]
				break
			}
		}
	}
	if len(lines) > 0 {
		t.lastLine = lines[len(lines)-1]
	}
	out = append(out, logSignals(fresh)...)
	if kb != t.keyboard {
		d := "hidden"
		if kb {
			d = "shown"
		}
		out = append(out, event.Signal{Kind: event.SigKeyboard, Detail: d})
		t.keyboard = kb
	}
	return out
}

func splitTrace(out string) (lines []string, keyboard bool) {
	log, ime, _ := strings.Cut(out, "__APEX_IME__")
	for _, l := range strings.Split(log, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "---------") {
			lines = append(lines, l)
		}
	}
	return lines, strings.Contains(ime, "mInputShown=true")
}

var (
	crashProcRE = lazy.Regexp(`AndroidRuntime: Process: ([\w.]+), PID`)
	anrRE       = lazy.Regexp(`ANR in ([\w.]+)`)
	exceptionRE = lazy.Regexp(`AndroidRuntime: ((?:[\w$]+\.)+[\w$]*(?:Exception|Error)\b.*)`)
)

// logSignals finds crashes and ANRs in new logcat lines.
func logSignals(lines []string) []event.Signal {
	var out []event.Signal
	for i, l := range lines {
		if m := crashProcRE().FindStringSubmatch(l); m != nil {
			s := event.Signal{Kind: event.SigCrash, App: m[1]}
			for _, next := range lines[i+1 : min(i+4, len(lines))] {
				if e := exceptionRE().FindStringSubmatch(next); e != nil {
					s.Detail = truncate(e[1], 160)
					break
				}
			}
			out = append(out, s)
		}
		if m := anrRE().FindStringSubmatch(l); m != nil {
			out = append(out, event.Signal{Kind: event.SigANR, App: m[1], Detail: truncate(strings.TrimSpace(l), 160)})
		}
	}
	return out
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
