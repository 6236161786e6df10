package adbd

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func init() {
	commands["am"] = cmdAm
	commands["monkey"] = cmdMonkey
}

// intent is what am's intent options describe.
type intent struct {
	action, data, pkg, comp, flags string
	cats                           []string
	extras                         map[string]string
	wait, stop                     bool
}

func parseIntent(a []string) (intent, error) {
	in := intent{extras: map[string]string{}}
	next := func(i *int) (string, error) {
		if *i+1 >= len(a) {
			return "", fmt.Errorf("Argument expected after \"%s\"", a[*i])
		}
		*i++
		return a[*i], nil
	}
	for i := 0; i < len(a); i++ {
		var err error
		switch a[i] {
		case "-a":
			in.action, err = next(&i)
		case "-d":
			in.data, err = next(&i)
		case "-c":
			var c string
			c, err = next(&i)
			in.cats = append(in.cats, c)
		case "-n":
			in.comp, err = next(&i)
		case "-p":
			in.pkg, err = next(&i)
		case "-f":
			in.flags, err = next(&i)
		case "-t", "--user", "--display", "--windowingMode", "--activityType", "-r", "--receiver-permission":
			_, err = next(&i)
		case "-e", "--es", "--ei", "--ez", "--el", "--ef", "--eu", "--eia", "--esa":
			var k, v string
			if k, err = next(&i); err == nil {
				v, err = next(&i)
				in.extras[k] = v
			}
		case "-W":
			in.wait = true
		case "-S":
			in.stop = true
		default:
			if strings.HasPrefix(a[i], "-") {
				continue // flags that do not change what the simulator does (--activity-clear-top, -D, …)
			}
			if in.comp == "" && in.pkg == "" && strings.Contains(a[i], "/") {
				in.comp = a[i]
			} else if in.pkg == "" && in.comp == "" && !strings.Contains(a[i], ":") {
				in.pkg = a[i]
			} else if in.data == "" {
				in.data = a[i]
			}
		}
		if err != nil {
			return in, err
		}
	}
	return in, nil
}

func (in intent) String() string {
	var parts []string
	if in.action != "" {
		parts = append(parts, "act="+in.action)
	}
	if len(in.cats) > 0 {
		parts = append(parts, "cat=["+strings.Join(in.cats, ",")+"]")
	}
	if in.data != "" {
		parts = append(parts, "dat="+in.data)
	}
	if in.flags != "" {
		parts = append(parts, "flg="+in.flags)
	}
	if in.pkg != "" {
		parts = append(parts, "pkg="+in.pkg)
	}
	if in.comp != "" {
		parts = append(parts, "cmp="+in.comp)
	}
	if len(in.extras) > 0 {
		parts = append(parts, "(has extras)")
	}
	return "Intent { " + strings.Join(parts, " ") + " }"
}

func cmdAm(ctx context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) == 0 {
		c.printf("usage: am [start|start-activity|force-stop|kill|broadcast] ...\n")
		return 255
	}
	switch a[0] {
	case "start", "start-activity":
		in, err := parseIntent(a[1:])
		if err != nil {
			return c.fail(255, "%v", err)
		}
		return amStart(c, in)
	case "force-stop", "kill":
		if len(a) < 2 {
			return c.fail(255, "Argument expected after \"%s\"", a[0])
		}
		pkg := a[len(a)-1]
		c.phone().ForceStop(pkg)
		c.s.mu.Lock()
		delete(c.s.started, pkg)
		c.s.mu.Unlock()
		return 0
	case "broadcast":
		in, err := parseIntent(a[1:])
		if err != nil {
			return c.fail(255, "%v", err)
		}
		return amBroadcast(c, in)
	case "get-current-user":
		c.printf("0\n")
		return 0
	}
	fmt.Fprintf(c.Stderr, "Unknown command: %s\n", a[0])
	return 255
}

func amStart(c *Cmd, in intent) int {
	c.printf("Starting: %s\n", in)
	if in.action == "android.intent.action.VIEW" && in.data != "" && in.comp == "" {
		return amView(c, in)
	}
	pkg, act := in.pkg, ""
	if in.comp != "" {
		var ok bool
		pkg, act, ok = strings.Cut(in.comp, "/")
		if !ok {
			fmt.Fprintf(c.Stderr, "Error: Bad component name: %s\n", in.comp)
			return 255
		}
	}
	p, ok := c.s.pkg(pkg)
	if !ok || p.LauncherActivity == "" {
		if in.comp != "" {
			fmt.Fprintf(c.Stderr, "Error type 3\nError: Activity class {%s} does not exist.\n", in.comp)
		} else {
			fmt.Fprintf(c.Stderr, "Error: Activity not started, unable to resolve %s\n", in)
		}
		return 1
	}
	if act != "" {
		full := act
		if strings.HasPrefix(act, ".") {
			full = pkg + act
		}
		if full != activityClass(p) {
			// The Phone contract launches an app at its launcher activity only.
			fmt.Fprintf(c.Stderr, "Error type 3\nError: Activity class {%s} does not exist.\n", in.comp)
			return 1
		}
	}
	pkg = p.Name // an alias names the app by its package
	if in.stop {
		c.phone().ForceStop(pkg)
	}
	start := time.Now()
	if err := c.phone().Launch(pkg); err != nil {
		fmt.Fprintf(c.Stderr, "Error: Activity not started: %v\n", err)
		return 1
	}
	c.s.mu.Lock()
	c.s.started[pkg] = true
	c.s.mu.Unlock()
	if in.wait {
		ms := time.Since(start).Milliseconds()
		c.printf("Status: ok\nLaunchState: COLD\nActivity: %s\nTotalTime: %d\nWaitTime: %d\nComplete\n",
			component(pkg, activityClass(p)), ms, ms)
	}
	return 0
}

// amView delivers a VIEW intent with a URI to the app that opens it (the
// browser for http and https).
func amView(c *Cmd, in intent) int {
	start := time.Now()
	pkg, err := c.phone().View(in.data)
	if err != nil || (in.pkg != "" && in.pkg != pkg) {
		fmt.Fprintf(c.Stderr, "Error: Activity not started, unable to resolve %s\n", in)
		return 1
	}
	c.s.mu.Lock()
	c.s.started[pkg] = true
	c.s.mu.Unlock()
	if in.wait {
		p, _ := c.s.pkg(pkg)
		ms := time.Since(start).Milliseconds()
		c.printf("Status: ok\nLaunchState: COLD\nActivity: %s\nTotalTime: %d\nWaitTime: %d\nComplete\n",
			component(pkg, activityClass(p)), ms, ms)
	}
	return 0
}

// amBroadcast delivers the broadcasts the simulated phone has receivers
// for — the ADBKeyBoard IME's text input and the clipboard — and, like
// Android, reports result=0 for any other (nobody received it).
func amBroadcast(c *Cmd, in intent) int {
	c.printf("Broadcasting: %s\n", in)
	msg := in.extras["msg"]
	switch in.action {
	case "ADB_INPUT_TEXT":
		c.phone().InputText(msg)
	case "ADB_INPUT_B64":
		b, err := base64.StdEncoding.DecodeString(msg)
		if err != nil {
			c.printf("Broadcast completed: result=0, data=\"bad base64: %v\"\n", err)
			return 0
		}
		c.phone().InputText(string(b))
	case "ADB_INPUT_CODE":
		code, err := strconv.Atoi(in.extras["code"])
		if err == nil {
			c.phone().KeyEvent(code)
		}
	case "ADB_INPUT_CHARS":
		var rs []rune
		for _, f := range strings.Split(in.extras["chars"], ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				rs = append(rs, rune(n))
			}
		}
		c.phone().InputText(string(rs))
	case "clipper.set", "devicekit.clipboard.set":
		text := in.extras["text"]
		if in.extras["encoding"] == "base64" {
			if b, err := base64.StdEncoding.DecodeString(text); err == nil {
				text = string(b)
			}
		}
		c.s.mu.Lock()
		c.s.clipboard = text
		c.s.mu.Unlock()
	case "devicekit.clipboard.clear":
		c.s.mu.Lock()
		c.s.clipboard = ""
		c.s.mu.Unlock()
	}
	c.printf("Broadcast completed: result=0\n")
	return 0
}

func cmdMonkey(_ context.Context, c *Cmd) int {
	var pkg string
	for i := 1; i < len(c.Args); i++ {
		if c.Args[i] == "-p" && i+1 < len(c.Args) {
			pkg = c.Args[i+1]
			i++
		}
	}
	if pkg == "" {
		return c.fail(1, "monkey without -p would send random events; the simulator only supports `monkey -p PACKAGE -c android.intent.category.LAUNCHER 1`")
	}
	c.printf("  bash arg: -p\n  bash arg: %s\n", pkg)
	p, ok := c.s.pkg(pkg)
	if !ok || p.LauncherActivity == "" {
		c.printf("** No activities found to run, monkey aborted.\n")
		return 252
	}
	pkg = p.Name
	start := time.Now()
	if err := c.phone().Launch(pkg); err != nil {
		c.printf("** monkey aborted: %v\n", err)
		return 252
	}
	c.s.mu.Lock()
	c.s.started[pkg] = true
	c.s.mu.Unlock()
	ms := time.Since(start).Milliseconds()
	c.printf("Events injected: 1\n## Network stats: elapsed time=%dms (0ms mobile, 0ms wifi, %dms not connected)\n", ms, ms)
	return 0
}
