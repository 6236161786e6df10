package runner

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/apexagent/apex/store"
)

// Outcome is how one script file ended in a batch: its last attempt's
// Result, or the error that kept it from running at all.
type Outcome struct {
	File     string
	Result   *Result // nil when the script could not run
	Err      error   // why it could not run (bad YAML, no device, no store)
	Report   string  // path of the HTML report, when one was written
	Attempts int
	// Row numbers the data row the script ran with, from 1; 0 without data.
	Row int
}

// Name is how the outcome is shown: the file, and its data row.
func (o Outcome) Name() string { return jobName(o.File, o.Row) }

// Passed reports whether the script ran and passed.
func (o Outcome) Passed() bool {
	return o.Err == nil && o.Result != nil && o.Result.Status == store.StatusPassed
}

// Status is the outcome in one word: passed, failed, error or canceled.
func (o Outcome) Status() string {
	switch {
	case o.Result != nil:
		return o.Result.Status
	case o.Err != nil:
		return store.StatusError
	}
	return store.StatusError
}

// Reason says why the outcome is not passed.
func (o Outcome) Reason() string {
	if o.Err != nil {
		return o.Err.Error()
	}
	if o.Result != nil {
		return o.Result.Reason
	}
	return ""
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	File       string          `xml:"file,attr,omitempty"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes a JUnit XML report: one testsuite per script run (a
// script with data rows runs once per row), one testcase per task. A failed task is a failure; a run the device or a
// cancel broke is an error on the task it stopped in; a script that could
// not run is one errored testcase.
func WriteJUnit(w io.Writer, outs []Outcome) error {
	all := junitSuites{Name: "apex"}
	var total time.Duration
	for _, o := range outs {
		name := strings.TrimSuffix(filepath.Base(o.File), filepath.Ext(o.File))
		if o.Row > 0 {
			name = fmt.Sprintf("%s [row %d]", name, o.Row)
		}
		s := junitSuite{Name: name, File: o.File}
		if o.Report != "" {
			s.Properties = append(s.Properties, junitProperty{"report", o.Report})
		}
		if o.Attempts > 1 {
			s.Properties = append(s.Properties, junitProperty{"attempts", fmt.Sprint(o.Attempts)})
		}
		switch {
		case o.Result == nil:
			msg := o.Reason()
			s.Cases = []junitCase{{Name: "run", Classname: name, Time: "0.000", Error: &junitProblem{Message: firstLine(msg), Type: "error", Text: msg}}}
			s.Errors = 1
		default:
			r := o.Result
			s.Properties = append(s.Properties, junitProperty{"run", r.Run.ID}, junitProperty{"device", r.Run.Device})
			if !r.Run.Started.IsZero() {
				s.Timestamp = r.Run.Started.UTC().Format("2006-01-02T15:04:05")
			}
			s.Time = seconds(r.Duration)
			total += r.Duration
			for _, t := range r.Tasks {
				c := junitCase{Name: t.Name, Classname: name, Time: seconds(t.Duration)}
				switch {
				case t.Status == store.StepPassed:
				case t.Status == store.StepSkipped:
					c.Skipped = &junitProblem{Message: "not run: " + firstLine(r.Reason)}
					s.Skipped++
				case r.Status == store.StatusError || r.Status == store.StatusCanceled:
					c.Error = &junitProblem{Message: firstLine(t.Reason), Type: r.Status, Text: t.Reason}
					s.Errors++
				default:
					typ := "failed"
					if t.ContinueOnError {
						typ = "failed (continueOnError)"
					}
					c.Failure = &junitProblem{Message: firstLine(t.Reason), Type: typ, Text: t.Reason}
					s.Failures++
				}
				s.Cases = append(s.Cases, c)
			}
			if r.Status != store.StatusPassed && s.Failures+s.Errors == 0 {
				// It broke outside any task (launching the app, reaching the device).
				s.Cases = append(s.Cases, junitCase{Name: "setup", Classname: name, Time: s.Time, Error: &junitProblem{Message: firstLine(r.Reason), Type: r.Status, Text: r.Reason}})
				s.Errors++
			}
		}
		if s.Time == "" {
			s.Time = "0.000"
		}
		s.Tests = len(s.Cases)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		all.Skipped += s.Skipped
		all.Suites = append(all.Suites, s)
	}
	all.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return truncate(s, 300)
}

// Summary is the machine-readable outcome of a batch (apex run --summary).
type Summary struct {
	Passed  bool            `json:"passed"`
	Total   int             `json:"total"`
	Counts  map[string]int  `json:"counts"` // by status
	Scripts []ScriptSummary `json:"scripts"`
}

// ScriptSummary is one script in a Summary.
type ScriptSummary struct {
	File     string         `json:"file"`
	Row      int            `json:"row,omitempty"` // the data row, from 1
	Status   string         `json:"status"`
	Reason   string         `json:"reason,omitempty"`
	RunID    string         `json:"run_id,omitempty"`
	RunDir   string         `json:"run_dir,omitempty"`
	Report   string         `json:"report,omitempty"`
	Device   string         `json:"device,omitempty"`
	Attempts int            `json:"attempts"`
	Duration float64        `json:"duration_seconds"`
	Steps    map[string]int `json:"steps,omitempty"`
	Tasks    []TaskSummary  `json:"tasks,omitempty"`
	Outputs  map[string]any `json:"outputs,omitempty"`
}

// TaskSummary is one task in a ScriptSummary.
type TaskSummary struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Summarize builds the Summary of outcomes.
func Summarize(outs []Outcome) Summary {
	s := Summary{Passed: len(outs) > 0, Total: len(outs), Counts: map[string]int{}, Scripts: []ScriptSummary{}}
	for _, o := range outs {
		ss := ScriptSummary{File: o.File, Row: o.Row, Status: o.Status(), Reason: o.Reason(), Report: o.Report, Attempts: o.Attempts}
		if r := o.Result; r != nil {
			ss.RunID, ss.RunDir, ss.Device = r.Run.ID, r.Run.Dir, r.Run.Device
			ss.Duration = r.Duration.Seconds()
			ss.Steps = map[string]int{"total": r.Steps, "passed": r.Passed, "failed": r.Failed, "canceled": r.Canceled, "skipped": r.Skipped}
			for _, t := range r.Tasks {
				ss.Tasks = append(ss.Tasks, TaskSummary{Name: t.Name, Status: t.Status, Reason: t.Reason})
			}
			if len(r.Outputs) > 0 {
				ss.Outputs = r.Outputs
			}
		}
		s.Counts[ss.Status]++
		if !o.Passed() {
			s.Passed = false
		}
		s.Scripts = append(s.Scripts, ss)
	}
	return s
}

// WriteSummary writes Summarize(outs) as indented JSON.
func WriteSummary(w io.Writer, outs []Outcome) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Summarize(outs))
}
