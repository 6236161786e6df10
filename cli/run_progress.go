//go:build !apexlite

package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/store"
)

// progress shows how a batch goes. On a terminal it keeps one status line
// at the bottom with a bar per running script and prints a line per
// finished script above it; otherwise it prints plain lines, one per step
// and one per script.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	total   int
	done_   int
	running map[string]runner.Progress
	drawn   bool
}

func newProgress(w io.Writer, force *bool, total int) *progress {
	tty := isTerminal(w)
	if force != nil {
		tty = *force
	}
	return &progress{w: w, tty: tty, total: total, running: map[string]runner.Progress{}}
}

func scriptName(file string) string {
	return strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
}

// step reports a finished step of a running script.
func (p *progress) step(file string, s runner.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		line := fmt.Sprintf("%s %d/%d %s %s", scriptName(file), s.Step, s.Steps, s.Status, s.Name)
		if s.Status == store.StepFailed && s.Error != "" {
			line += ": " + s.Error
		}
		p.println(line)
		return
	}
	p.running[file] = s
	p.draw()
}

// finished prints the outcome of a script and where its report is.
func (p *progress) finished(o runner.Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, o.Name())
	p.done_++
	p.clear()
	mark := map[bool]string{true: "PASS", false: "FAIL"}[o.Passed()]
	line := fmt.Sprintf("%s %s", mark, o.Name())
	if r := o.Result; r != nil {
		line += fmt.Sprintf(" (%d steps: %d passed, %d failed, ", r.Steps, r.Passed, r.Failed)
		if r.Canceled > 0 {
			line += fmt.Sprintf("%d canceled, ", r.Canceled)
		}
		line += fmt.Sprintf("%d skipped; %s", r.Skipped, since(r.Duration))
		if o.Attempts > 1 {
			line += fmt.Sprintf("; %d attempts", o.Attempts)
		}
		line += ")"
	}
	if !o.Passed() {
		if reason := o.Reason(); reason != "" {
			line += "\n" + o.Status() + ": " + reason
		}
	}
	if o.Report != "" {
		line += "\nreport: " + o.Report
	} else if o.Result != nil {
		line += "\nrun: " + o.Result.Run.Dir
	}
	p.println(line)
	p.draw()
}

// note prints a line that is not a script outcome (a retry).
func (p *progress) note(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.println(s)
	p.draw()
}

// println writes one message whole: its later lines indented under the
// first, and on a terminal wrapped to its width.
func (p *progress) println(s string) {
	width := 0
	if p.tty {
		width = termWidth()
	}
	fmt.Fprintln(p.w, indentLines(s, "     ", width))
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

// clear erases the status line.
func (p *progress) clear() {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// draw writes the status line: one short bar per running script.
func (p *progress) draw() {
	if !p.tty || len(p.running) == 0 {
		return
	}
	files := make([]string, 0, len(p.running))
	for f := range p.running {
		files = append(files, f)
	}
	sort.Strings(files)
	var b strings.Builder
	fmt.Fprintf(&b, "[%d/%d]", p.done_, p.total)
	for _, f := range files {
		s := p.running[f]
		const width = 10
		filled := 0
		if s.Steps > 0 {
			filled = s.Step * width / s.Steps
		}
		fmt.Fprintf(&b, " %s %s %d/%d", scriptName(f), strings.Repeat("█", filled)+strings.Repeat("░", width-filled), s.Step, s.Steps)
	}
	p.clear()
	fmt.Fprint(p.w, b.String())
	p.drawn = true
}
