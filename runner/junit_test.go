package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"testing"
)

// parsedJUnit is what a CI system reads from the file.
type parsedJUnit struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitAndSummary(t *testing.T) {
	st := openStore(t)
	pass, _ := Run(context.Background(), newFakeShop(), load(t, shopScript), fastOptions(st))
	fail, _ := Run(context.Background(), newFakeShop(), load(t, "tasks:\n  - name: a\n    flow:\n      - tap: Nope\n  - name: b\n    flow:\n      - back\n"), fastOptions(st))
	lost := newFakeShop()
	lost.offlineAfter = 3
	broke, _ := Run(context.Background(), lost, load(t, shopScript), fastOptions(st))
	outs := []Outcome{
		{File: "pass.yaml", Result: pass, Attempts: 1, Report: "/tmp/r/report.html"},
		{File: "fail.yaml", Result: fail, Attempts: 2},
		{File: "lost.yaml", Result: broke, Attempts: 1},
		{File: "bad.yaml", Err: errors.New("bad.yaml:3:5: unknown step \"clickIt\""), Attempts: 1},
	}
	var b bytes.Buffer
	if err := WriteJUnit(&b, outs); err != nil {
		t.Fatal(err)
	}
	var j parsedJUnit
	if err := xml.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, b.String())
	}
	// pass: 2 tasks; fail: a failed + b skipped; lost: search and buy
	// skipped + setup errored (it broke while launching); bad: 1 error.
	if j.Tests != 8 || j.Failures != 1 || j.Errors != 2 || j.Skipped != 3 || len(j.Suites) != 4 {
		t.Fatalf("totals tests=%d failures=%d errors=%d skipped=%d suites=%d\n%s", j.Tests, j.Failures, j.Errors, j.Skipped, len(j.Suites), b.String())
	}
	if c := j.Suites[1].Cases[0]; c.Failure == nil || c.Name != "a" {
		t.Errorf("fail suite case = %+v", c)
	}
	if c := j.Suites[3].Cases[0]; c.Error == nil || c.Error.Message == "" {
		t.Errorf("bad suite case = %+v", c)
	}
	var sb bytes.Buffer
	if err := WriteSummary(&sb, outs); err != nil {
		t.Fatal(err)
	}
	var sum Summary
	if err := json.Unmarshal(sb.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Passed || sum.Total != 4 || sum.Counts["passed"] != 1 || sum.Counts["failed"] != 1 || sum.Counts["error"] != 2 {
		t.Errorf("summary = %+v", sum)
	}
	if sum.Scripts[0].RunID == "" || sum.Scripts[0].Report != "/tmp/r/report.html" || sum.Scripts[0].Steps["total"] != 12 {
		t.Errorf("script summary = %+v", sum.Scripts[0])
	}
}
