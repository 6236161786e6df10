// Package proctest lists this process's running children from /proc, for
// tests that kill a subprocess they did not start themselves (a
// supervised encoder, a simulated-phone server) and benchmarks that count
// its CPU.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
)

// Proc is one child process.
type Proc struct {
	PID  int
	Name string   // the command name (/proc/PID/stat's comm)
	Args []string // its command line
	CPU  time.Duration
}

// Children lists the running (not zombie) children of this process.
func Children() []Proc { return ChildrenOf(os.Getpid()) }

// ChildrenOf lists the running (not zombie) children of process pid: a
// grandchild of a test is found through its child.
func ChildrenOf(pid int) []Proc {
	var out []Proc
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := strconv.Itoa(pid)
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || closing < open {
			continue
		}
		// After "pid (comm)": state ppid … utime stime (fields 3, 4, 14, 15).
		fields := strings.Fields(string(b[closing+1:]))
		if len(fields) < 13 || fields[1] != self || fields[0] == "Z" {
			continue
		}
		dir := filepath.Dir(f)
		pid, _ := strconv.Atoi(filepath.Base(dir))
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		ut, _ := strconv.Atoi(fields[11])
		st, _ := strconv.Atoi(fields[12])
		out = append(out, Proc{PID: pid, Name: string(b[open+1 : closing]), Args: strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00"),
			CPU: time.Duration(ut+st) * 10 * time.Millisecond}) // USER_HZ is 100
	}
	return out
}

// Wait polls until a child that match accepts runs, and returns it; it
// fails t after ten seconds (stretched by patience) naming what, a child
// another goroutine or process starts.
func Wait(t testing.TB, what string, match func(Proc) bool) Proc {
	t.Helper()
	return WaitOf(t, os.Getpid(), what, match)
}

// WaitOf is Wait for a child of process pid.
func WaitOf(t testing.TB, pid int, what string, match func(Proc) bool) Proc {
	t.Helper()
	var found Proc
	patience.Poll(t, 10*time.Second, func() error {
		for _, p := range ChildrenOf(pid) {
			if match(p) {
				found = p
				return nil
			}
		}
		return fmt.Errorf("no %s child process", what)
	})
	return found
}
