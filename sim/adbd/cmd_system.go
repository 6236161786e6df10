package adbd

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

func init() {
	commands["getprop"] = cmdGetprop
	commands["setprop"] = cmdSetprop
	commands["wm"] = cmdWm
	commands["settings"] = cmdSettings
	commands["date"] = cmdDate
	commands["pidof"] = cmdPidof
	commands["ps"] = cmdPs
	commands["run-as"] = cmdRunAs
	commands["cmd"] = cmdCmd
	commands["sh"] = cmdSh
	commands["content"] = cmdContent
	commands["id"] = func(_ context.Context, c *Cmd) int {
		c.printf("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1015(sdcard_rw),3003(inet) context=u:r:shell:s0\n")
		return 0
	}
	commands["whoami"] = func(_ context.Context, c *Cmd) int { c.printf("shell\n"); return 0 }
	commands["uname"] = func(_ context.Context, c *Cmd) int {
		if len(c.Args) > 1 && c.Args[1] == "-a" {
			c.printf("Linux localhost 5.10.0-apex-sim #1 SMP PREEMPT x86_64 Toybox\n")
		} else {
			c.printf("Linux\n")
		}
		return 0
	}
	commands["ime"] = cmdIme
}

// props are the phone's properties plus the few every booted device has.
func (s *Server) props() map[string]string {
	p := map[string]string{"sys.boot_completed": "1", "dev.bootcomplete": "1", "init.svc.bootanim": "stopped",
		"ro.debuggable": "0", "ro.secure": "1", "persist.sys.usb.config": "adb"}
	for k, v := range s.phone.Props() {
		p[k] = v
	}
	s.mu.Lock()
	for k, v := range s.setProps {
		p[k] = v
	}
	s.mu.Unlock()
	return p
}

func cmdGetprop(_ context.Context, c *Cmd) int {
	props := c.s.props()
	if len(c.Args) == 1 {
		for _, k := range slices.Sorted(maps.Keys(props)) {
			c.printf("[%s]: [%s]\n", k, props[k])
		}
		return 0
	}
	v, ok := props[c.Args[1]]
	if !ok && len(c.Args) > 2 {
		v = c.Args[2]
	}
	c.printf("%s\n", v)
	return 0
}

func cmdSetprop(_ context.Context, c *Cmd) int {
	if len(c.Args) != 3 {
		return c.fail(1, "usage: setprop NAME VALUE")
	}
	if strings.HasPrefix(c.Args[1], "ro.") {
		return c.fail(1, "failed to set property '%s' to '%s'", c.Args[1], c.Args[2])
	}
	c.s.mu.Lock()
	c.s.setProps[c.Args[1]] = c.Args[2]
	c.s.mu.Unlock()
	if h, ok := c.hardware(); ok {
		h.SetProp(c.Args[1], c.Args[2])
	}
	if st, ok := c.phone().(StaleTreeSetter); ok && c.Args[1] == StaleTreeProp {
		st.SetStaleTree(c.Args[2] == "1" || c.Args[2] == "true")
	}
	return 0
}

// StaleTreeProp switches a phone's stale-tree mode (see sim.Phone.SetStaleTree)
// when the phone is a StaleTreeSetter: `setprop debug.apex.stale_tree 1`.
const StaleTreeProp = "debug.apex.stale_tree"

// StaleTreeSetter is a phone with a stale-tree mode, for tests of clients
// that must notice a UI tree lagging behind the screen.
type StaleTreeSetter interface{ SetStaleTree(on bool) }

func cmdWm(_ context.Context, c *Cmd) int {
	w, h, d := c.phone().Display()
	if len(c.Args) == 2 {
		switch c.Args[1] {
		case "size":
			c.printf("Physical size: %dx%d\n", w, h)
			return 0
		case "density":
			c.printf("Physical density: %d\n", d)
			return 0
		}
	}
	if len(c.Args) > 2 && (c.Args[1] == "size" || c.Args[1] == "density") {
		return c.fail(1, "the simulated display cannot be resized; its size is %dx%d at %d dpi", w, h, d)
	}
	if len(c.Args) > 1 && c.Args[1] == "user-rotation" {
		return wmUserRotation(c, c.Args[2:])
	}
	c.printf("Window manager (window) commands:\n  size [reset|WxH]\n  density [reset|DENSITY]\n  user-rotation [-d DISPLAY_ID] [free|lock] [rotation]\n")
	return 255
}

// wmUserRotation is `wm user-rotation [-d ID] [free|lock [ROTATION]]`: it
// reads or sets the system settings accelerometer_rotation and
// user_rotation, which the phone follows.
func wmUserRotation(c *Cmd, a []string) int {
	if len(a) >= 2 && a[0] == "-d" {
		if a[1] != "0" {
			return c.fail(1, "no display %s; the simulated phone has display 0", a[1])
		}
		a = a[2:]
	}
	ph := c.phone()
	if len(a) == 0 {
		mode := "lock"
		if v, _ := ph.Setting("system", "accelerometer_rotation"); v == "1" {
			mode = "free"
		}
		c.printf("%s %d\n", mode, ph.Rotation())
		return 0
	}
	switch a[0] {
	case "free":
		ph.PutSetting("system", "accelerometer_rotation", "1")
		return 0
	case "lock":
		r := strconv.Itoa(ph.Rotation())
		if len(a) > 1 {
			r = a[1]
		}
		if n, err := strconv.Atoi(r); err != nil || n < 0 || n > 3 {
			return c.fail(1, "Error: bad rotation %q: want 0, 1, 2 or 3", r)
		}
		ph.PutSetting("system", "accelerometer_rotation", "0")
		ph.PutSetting("system", "user_rotation", r)
		return 0
	}
	return c.fail(1, "Error: unknown user-rotation mode %q: want free or lock", a[0])
}

func cmdSettings(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) > 0 && a[0] == "--user" && len(a) > 1 {
		a = a[2:]
	}
	want := map[string]int{"get": 3, "put": 4, "delete": 3, "list": 2}
	if len(a) < 2 || want[a[0]] == 0 || (a[1] != "system" && a[1] != "secure" && a[1] != "global") {
		c.printf("usage:  settings [--user <USER_ID> | current] get namespace key\n        settings [--user <USER_ID> | current] put namespace key value\n")
		c.printf("        settings [--user <USER_ID> | current] delete namespace key\n        settings [--user <USER_ID> | current] list namespace\n")
		return 255
	}
	if len(a) < want[a[0]] {
		return c.fail(255, "%s %s needs %d arguments", a[0], a[1], want[a[0]]-1)
	}
	switch a[0] {
	case "get":
		if v, ok := c.phone().Setting(a[1], a[2]); ok {
			c.printf("%s\n", v)
		} else {
			c.printf("null\n")
		}
	case "put":
		c.phone().PutSetting(a[1], a[2], a[3])
	case "delete":
		n := 0
		if c.phone().DeleteSetting(a[1], a[2]) {
			n = 1
		}
		c.printf("Deleted %d rows\n", n)
	case "list":
		m := c.phone().Settings(a[1])
		for _, k := range slices.Sorted(maps.Keys(m)) {
			c.printf("%s=%s\n", k, m[k])
		}
	}
	return 0
}

func cmdDate(_ context.Context, c *Cmd) int {
	now := time.Now().UTC()
	if len(c.Args) == 1 {
		c.printf("%s\n", now.Format("Mon Jan _2 15:04:05 MST 2006"))
		return 0
	}
	f := c.Args[1]
	if !strings.HasPrefix(f, "+") {
		return c.fail(1, "setting the time is not permitted")
	}
	c.printf("%s\n", strftime(f[1:], now))
	return 0
}

// strftime formats the subset of toybox date's directives tools use.
func strftime(f string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		digits := 9
		if f[i] >= '1' && f[i] <= '9' && i+1 < len(f) && f[i+1] == 'N' {
			digits = int(f[i] - '0')
			i++
		}
		switch f[i] {
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'N':
			b.WriteString(fmt.Sprintf("%09d", t.Nanosecond())[:digits])
		case 'Y':
			b.WriteString(t.Format("2006"))
		case 'm':
			b.WriteString(t.Format("01"))
		case 'd':
			b.WriteString(t.Format("02"))
		case 'H':
			b.WriteString(t.Format("15"))
		case 'M':
			b.WriteString(t.Format("04"))
		case 'S':
			b.WriteString(t.Format("05"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// systemProcesses always run on the simulated phone.
var systemProcesses = []string{"system_server", "com.android.systemui", "com.android.phone", "adbd", "surfaceflinger"}

// pid gives a process a stable, plausible id.
func pid(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return 1000 + int(h.Sum32()%30000)
}

// running lists the processes alive now: system ones, apps started through
// am/monkey and not force-stopped, and the app on screen.
func (s *Server) running() []string {
	set := map[string]bool{}
	for _, p := range systemProcesses {
		set[p] = true
	}
	s.mu.Lock()
	for p := range s.started {
		set[p] = true
	}
	s.mu.Unlock()
	if fg, _ := s.phone.Foreground(); fg != "" {
		set[fg] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func cmdPidof(_ context.Context, c *Cmd) int {
	var pids []string
	for _, want := range c.Args[1:] {
		for _, p := range c.s.running() {
			if p == want {
				pids = append(pids, strconv.Itoa(pid(p)))
			}
		}
	}
	if len(pids) == 0 {
		return 1
	}
	c.printf("%s\n", strings.Join(pids, " "))
	return 0
}

func cmdPs(_ context.Context, c *Cmd) int {
	c.printf("USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME\n")
	c.printf("%-10s %7d %5d %7d %6d %-16s %4d S %s\n", "root", 1, 0, 10932, 2048, "do_epoll_wait", 0, "init")
	for _, p := range c.s.running() {
		user := "system"
		if strings.Contains(p, ".") && p != "com.android.systemui" && p != "com.android.phone" {
			user = fmt.Sprintf("u0_a%d", 100+pid(p)%100)
		}
		c.printf("%-10s %7d %5d %7d %6d %-16s %4d S %s\n", user, pid(p), 600, 14000000, 98000, "do_epoll_wait", 0, p)
	}
	return 0
}

func cmdRunAs(ctx context.Context, c *Cmd) int {
	if len(c.Args) < 2 {
		return c.fail(1, "usage: run-as <package-name> [--user <uid>] <command> [<args>]")
	}
	pkg := c.Args[1]
	p, ok := c.s.pkg(pkg)
	if !ok {
		return c.fail(1, "unknown package: %s", pkg)
	}
	if !p.Debuggable {
		return c.fail(1, "package not debuggable: %s", pkg)
	}
	if len(c.Args) == 2 {
		return 0
	}
	return c.s.RunShell(ctx, shellJoin(c.Args[2:]), c.Stdin, c.Stdout, c.Stderr)
}

func cmdSh(ctx context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) >= 2 && a[0] == "-c" {
		return c.s.RunShell(ctx, a[1], c.Stdin, c.Stdout, c.Stderr)
	}
	if len(a) >= 1 {
		script, err := c.fs().ReadFile(c.path(a[0]))
		if err != nil {
			return c.fail(127, "%s: No such file or directory", a[0])
		}
		return c.s.RunShell(ctx, string(script), c.Stdin, c.Stdout, c.Stderr)
	}
	return c.s.serveInteractive(ctx, c.Stdin, c.Stdout)
}

// cmdCmd is `cmd SERVICE ARGS…` (and abb_exec): binder services that have
// a shell command.
func cmdCmd(ctx context.Context, c *Cmd) int {
	if len(c.Args) < 2 {
		c.printf("cmd: No service specified; use -l to list all services\n")
		return 20
	}
	sub := &Cmd{s: c.s, Args: c.Args[1:], Dir: c.Dir, Env: c.Env, Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr}
	switch c.Args[1] {
	case "-l":
		c.printf("Currently running services:\n  activity\n  clipboard\n  display\n  input\n  input_method\n  package\n  settings\n  window\n")
		return 0
	case "package":
		return cmdPm(ctx, sub)
	case "activity":
		return cmdAm(ctx, sub)
	case "window":
		return cmdWm(ctx, sub)
	case "input":
		return cmdInput(ctx, sub)
	case "settings":
		return cmdSettings(ctx, sub)
	case "input_method":
		return cmdIme(ctx, sub)
	case "clipboard":
		return cmdClipboard(ctx, sub)
	case "display":
		if len(c.Args) > 2 && c.Args[2] == "get-displays" {
			w, h, d := c.phone().Display()
			c.printf("Displays:\nDisplay id 0: DisplayInfo{\"Built-in Screen\", displayId 0, state ON, type INTERNAL, uniqueId \"local:4619827259835644672\", app %d x %d, real %d x %d, density %d}\n", w, h, w, h, d)
			return 0
		}
	}
	if f, ok := services[c.Args[1]]; ok {
		return f(ctx, sub)
	}
	fmt.Fprintf(c.Stderr, "cmd: Can't find service: %s\n", c.Args[1])
	return 20
}

// cmdClipboard keeps a device clipboard that `cmd clipboard set/get text`
// and the ADBKeyBoard/devicekit clipboard broadcasts share.
func cmdClipboard(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	switch {
	case len(a) >= 2 && a[0] == "get" && a[1] == "text":
		c.s.mu.Lock()
		clip := c.s.clipboard
		c.s.mu.Unlock()
		if clip == "" {
			c.printf("null\n")
		} else {
			c.printf("%s\n", clip)
		}
		return 0
	case len(a) >= 3 && a[0] == "set" && a[1] == "text":
		c.s.mu.Lock()
		c.s.clipboard = strings.Join(a[2:], " ")
		c.s.mu.Unlock()
		return 0
	}
	c.printf("Clipboard service (clipboard) commands:\n  get text\n  set text TEXT\n")
	return 255
}

// adbKeyboardIME is the ADBKeyBoard input method the simulated phone has
// installed, so tools that type Unicode through it find it.
const adbKeyboardIME = "com.android.adbkeyboard/.AdbIME"

// imes lists the input methods: the phone's default, the stock keyboard
// and ADBKeyBoard.
func (c *Cmd) imes() []string {
	list := []string{"com.android.inputmethod.latin/.LatinIME", adbKeyboardIME}
	if cur, ok := c.phone().Setting("secure", "default_input_method"); ok && !slices.Contains(list, cur) {
		list = append([]string{cur}, list...)
	}
	return list
}

func cmdIme(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) == 0 {
		c.printf("ime <command>:\n  list [-a] [-s]\n  enable ID\n  disable ID\n  set ID\n")
		return 255
	}
	switch a[0] {
	case "list":
		for _, id := range c.imes() {
			c.printf("%s\n", id)
		}
		return 0
	case "enable", "disable", "set":
		if len(a) < 2 {
			return c.fail(255, "%s needs an input method id", a[0])
		}
		if !slices.Contains(c.imes(), a[1]) {
			c.printf("Unknown input method %s cannot be %sd for user #0\n", a[1], strings.TrimSuffix(a[0], "e")+"e")
			return 255
		}
		if a[0] == "set" {
			c.phone().PutSetting("secure", "default_input_method", a[1])
			c.printf("Input method %s selected for user #0\n", a[1])
		} else {
			c.printf("Input method %s: now %sd for user #0\n", a[1], strings.TrimSuffix(a[0], "e"))
		}
		return 0
	}
	return c.fail(255, "unknown command %q", a[0])
}

// shellJoin quotes args back into one command line.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
