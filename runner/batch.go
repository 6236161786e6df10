package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apexagent/apex/script"
)

// Job is one run of a batch: a script, once per data row.
type Job struct {
	File   string
	Script *script.Script // nil when it could not be loaded (Err)
	Err    error
	// Row numbers the data row the job runs with, from 1; 0 without data.
	Row    int
	Values map[string]string
	// Suite is the suite the script came from; nil when named on its own.
	Suite *script.Suite
}

// Name is how the job is shown: the file, and its row.
func (j Job) Name() string { return jobName(j.File, j.Row) }

func jobName(file string, row int) string {
	if row == 0 {
		return file
	}
	return fmt.Sprintf("%s [row %d]", file, row)
}

// PlanOptions tune Plan.
type PlanOptions struct {
	// Tags is apex run --tags: tags a script must have one of, !tag to
	// leave out those with it. Empty selects every script.
	Tags string
	// Data is apex run --data: a CSV file of rows; every script runs once
	// per row. Empty: a script's own data: rows, if any.
	Data string
	// Load are the options scripts load with (Values is set here).
	Load script.Options
}

// Plan turns the files of apex run (scripts, suite files, folders) into
// jobs, in order: a suite's scripts that its include/exclude and --tags
// select, each once per data row. A script that does not load is a job
// with Err whatever the tags, so a broken script never goes unnoticed.
// The error is about the command line: bad --tags, unreadable --data, a
// suite that does not load, nothing selected.
func Plan(files []string, o PlanOptions) ([]Job, error) {
	var include, exclude []string
	if o.Tags != "" {
		var err error
		if include, exclude, err = script.ParseTags(o.Tags); err != nil {
			return nil, err
		}
	}
	var data *script.Data
	if o.Data != "" {
		var err error
		if data, err = script.ReadData(o.Data); err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		o.Load.Values = data.Columns
	}
	var jobs []Job
	skipped := 0
	add := func(file string, suite *script.Suite) {
		s, err := script.LoadFile(file, &o.Load)
		if err != nil {
			jobs = append(jobs, Job{File: file, Err: err, Suite: suite})
			return
		}
		if (suite != nil && !suite.Selects(s.Tags)) || !script.SelectTags(s.Tags, include, exclude) {
			skipped++
			return
		}
		rows := data
		if rows == nil {
			rows = s.Data
		}
		if rows == nil {
			jobs = append(jobs, Job{File: file, Script: s, Suite: suite})
			return
		}
		for i, r := range rows.Rows {
			jobs = append(jobs, Job{File: file, Script: s, Row: i + 1, Values: r.Values, Suite: suite})
		}
	}
	for _, f := range files {
		if !script.IsSuite(f) {
			add(f, nil)
			continue
		}
		suite, err := script.LoadSuite(f)
		if err != nil {
			return nil, err
		}
		for _, sf := range suite.Scripts {
			add(sf, suite)
		}
	}
	if len(jobs) == 0 && skipped > 0 {
		return nil, errors.New(noneSelected(files, o.Tags))
	}
	return jobs, nil
}

func noneSelected(files []string, tags string) string {
	what := strings.Join(files, " ")
	if tags == "" {
		return fmt.Sprintf("no script of %s is selected by its suite's include/exclude", what)
	}
	return fmt.Sprintf("no script of %s has the tags --tags %s asks for: add tags: [%s] to a script, or give other tags", what, tags, filepath.Base(strings.TrimPrefix(strings.Split(tags, ",")[0], "!")))
}
