package adbd

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/internal/lazy"
)

func init() {
	commands["logcat"] = cmdLogcat
}

// logLine is one line of the phone's log, parsed back from the threadtime
// form the Phone keeps.
type logLine struct {
	when, pid, tid, level, tag, msg string
	raw                             string
}

var threadtimeLine = lazy.Regexp(`^(\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\s+(\d+)\s+(\d+) ([VDIWEFA]) (.*?)\s*: (.*)$`)

func parseLogLine(s string) logLine {
	m := threadtimeLine().FindStringSubmatch(s)
	if m == nil {
		return logLine{level: "I", msg: s, raw: s}
	}
	return logLine{when: m[1], pid: m[2], tid: m[3], level: m[4], tag: m[5], msg: m[6], raw: s}
}

// logLevels orders priorities; S (silent) is above them all.
const logLevels = "VDIWEFS"

// logFilter is logcat's filterspecs: TAG:LEVEL pairs and a default.
type logFilter struct {
	tags map[string]int
	def  int
}

func newLogFilter() *logFilter { return &logFilter{tags: map[string]int{}} }

// add parses one filterspec ("ActivityManager:I", "*:S", "Tag").
func (f *logFilter) add(spec string) bool {
	tag, lvl, ok := strings.Cut(spec, ":")
	n := 0 // a bare tag means verbose
	if ok {
		n = strings.Index(logLevels, strings.ToUpper(lvl))
		if len(lvl) != 1 || n < 0 {
			return false
		}
	}
	if tag == "*" {
		f.def = n
	} else {
		f.tags[tag] = n
	}
	return true
}

func (f *logFilter) pass(l logLine) bool {
	min, ok := f.tags[l.tag]
	if !ok {
		min = f.def
	}
	return strings.Index(logLevels, l.level) >= min
}

// format renders a line in one of logcat's -v formats; year prefixes
// the date with the year (the -v year modifier).
func (l logLine) format(f, year string) string {
	if l.when == "" {
		return l.raw
	}
	if year != "" {
		l.when = year + "-" + l.when
	}
	pid, _ := strconv.Atoi(l.pid)
	switch f {
	case "brief":
		return fmt.Sprintf("%s/%-8s(%5d): %s", l.level, l.tag, pid, l.msg)
	case "tag":
		return fmt.Sprintf("%s/%-8s: %s", l.level, l.tag, l.msg)
	case "process":
		return fmt.Sprintf("%s(%5d) %s  (%s)", l.level, pid, l.msg, l.tag)
	case "time":
		return fmt.Sprintf("%s %s/%-8s(%5d): %s", l.when, l.level, l.tag, pid, l.msg)
	case "raw":
		return l.msg
	case "long":
		return fmt.Sprintf("[ %s %5d:%5s %s/%-8s ]\n%s\n", l.when, pid, l.tid, l.level, l.tag, l.msg)
	}
	if year != "" {
		return fmt.Sprintf("%s %5s %5s %s %s: %s", l.when, l.pid, l.tid, l.level, l.tag, l.msg)
	}
	return l.raw
}

var logFormats = map[string]bool{"brief": true, "tag": true, "process": true, "time": true, "threadtime": true, "raw": true, "long": true}

// logFormatModifiers are accepted and change nothing here (the log is
// already in UTC with milliseconds).
var logFormatModifiers = map[string]bool{"color": true, "descriptive": true, "epoch": true, "monotonic": true,
	"printable": true, "uid": true, "usec": true, "UTC": true, "zone": true, "nsec": true}

// cmdLogcat is logcat: -d, -c, -t N, -T N, -s, -v FORMAT, -e REGEX, -b,
// filterspecs and ANDROID_LOG_TAGS (which `adb logcat` exports).
func cmdLogcat(ctx context.Context, c *Cmd) int {
	dump, tail, format, year := false, -1, "threadtime", ""
	crashOnly := false
	filter := newLogFilter()
	var specs []string
	var grep *regexp.Regexp
	a := c.Args[1:]
	for i := 0; i < len(a); i++ {
		arg := a[i]
		val := func() (string, bool) {
			if len(arg) > 2 && strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "--") {
				return arg[2:], true // -t5, -vbrief
			}
			if i+1 < len(a) {
				i++
				return a[i], true
			}
			return "", false
		}
		flag := arg
		if len(arg) > 2 && arg[0] == '-' && arg[1] != '-' {
			flag = arg[:2]
		}
		switch flag {
		case "-c":
			c.s.mu.Lock()
			c.s.logcatFrom = len(c.phone().Logcat())
			c.s.mu.Unlock()
			return 0
		case "-d":
			dump = true
		case "-s":
			filter.def = len(logLevels) - 1
		case "-t", "-T":
			v, ok := val()
			n, err := strconv.Atoi(v)
			if !ok || err != nil || n < 0 {
				return c.fail(1, "invalid count for %s: %q (logcat takes a number of lines)", flag, v)
			}
			tail = n
			dump = dump || flag == "-t"
		case "-v":
			v, ok := val()
			for _, f := range strings.Split(v, ",") {
				switch {
				case logFormats[f]:
					format = f
				case f == "year":
					year = time.Now().UTC().Format("2006")
				case logFormatModifiers[f]:
				default:
					ok = false
				}
			}
			if !ok {
				return c.fail(1, "Invalid parameter \"%s\" to -v", v)
			}
		case "-e", "--regex":
			v, _ := val()
			re, err := regexp.Compile(v)
			if err != nil {
				return c.fail(1, "Invalid regex %q: %v", v, err)
			}
			grep = re
		case "-b", "-g", "-G", "-f", "-r", "-n", "--pid", "-m":
			if flag == "-b" {
				v, _ := val()
				crashOnly = v == "crash" // the crash buffer holds the apps' fatal exceptions
				continue
			}
			if flag == "-g" {
				c.printf("main: ring buffer is 256 KiB (%d KiB consumed), max entry is 5120 B, max payload is 4068 B\n", len(c.phone().Logcat())/8)
				return 0
			}
			val()
		default:
			if strings.HasPrefix(arg, "-") {
				return c.fail(1, "Unknown option '%s'", arg)
			}
			specs = append(specs, arg)
		}
	}
	if len(specs) == 0 {
		specs = strings.Fields(c.env("ANDROID_LOG_TAGS"))
	}
	for _, sp := range specs {
		if !filter.add(sp) {
			return c.fail(1, "Invalid filter expression '%s'", sp)
		}
	}
	// -t and -T count the lines that pass the filters.
	keep := func(lines []string) []logLine {
		var out []logLine
		for _, s := range lines {
			if l := parseLogLine(s); filter.pass(l) && (grep == nil || grep.MatchString(l.msg)) && (!crashOnly || l.tag == "AndroidRuntime") {
				out = append(out, l)
			}
		}
		return out
	}
	emit := func(lines []logLine) {
		for _, l := range lines {
			c.printf("%s\n", l.format(format, year))
		}
	}
	lines := c.phone().Logcat()
	c.s.mu.Lock()
	from := min(c.s.logcatFrom, len(lines))
	c.s.mu.Unlock()
	shown := keep(lines[from:])
	if tail >= 0 && tail < len(shown) {
		shown = shown[len(shown)-tail:]
	}
	emit(shown)
	if dump {
		return 0
	}
	// Follow mode: stream new lines until the host hangs up.
	seen := len(lines)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return 130
		case <-tick.C:
		}
		lines = c.phone().Logcat()
		emit(keep(lines[min(seen, len(lines)):]))
		seen = len(lines)
		if f, ok := c.Stdout.(interface{ Flush() error }); ok {
			f.Flush()
		}
	}
}
