package adbd

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The everyday toybox commands tools run besides the file basics of
// cmd_files.go.
func init() {
	commands["find"] = cmdFind
	commands["stat"] = cmdStat
	commands["df"] = cmdDf
	commands["sed"] = cmdSed
	commands["base64"] = cmdBase64
	commands["which"] = cmdWhich
	commands["screenrecord"] = cmdScreenrecord
	commands["appops"] = cmdAppops
	commands["svc"] = cmdSvc
}

// cmdFind is `find [PATH…] [-maxdepth N] [-type f|d] [-name GLOB]
// [-iname GLOB] [-print]`.
func cmdFind(_ context.Context, c *Cmd) int {
	var roots []string
	a := c.Args[1:]
	for len(a) > 0 && !strings.HasPrefix(a[0], "-") {
		roots, a = append(roots, a[0]), a[1:]
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	maxDepth, typ := -1, ""
	var names []func(string) bool
	for i := 0; i < len(a); i++ {
		arg := func() (string, bool) {
			if i+1 < len(a) {
				i++
				return a[i], true
			}
			return "", false
		}
		switch a[i] {
		case "-maxdepth":
			v, _ := arg()
			n, err := strconv.Atoi(v)
			if err != nil {
				return c.fail(1, "bad -maxdepth %q", v)
			}
			maxDepth = n
		case "-type":
			typ, _ = arg()
			if typ != "f" && typ != "d" {
				return c.fail(1, "bad -type %q (this device's files are f or d)", typ)
			}
		case "-name", "-iname":
			fold := a[i] == "-iname"
			v, _ := arg()
			if fold {
				v = strings.ToLower(v)
			}
			names = append(names, func(n string) bool {
				if fold {
					n = strings.ToLower(n)
				}
				ok, _ := path.Match(v, n)
				return ok
			})
		case "-print":
		default:
			return c.fail(1, "unknown argument %q (this device's find knows -name, -iname, -type, -maxdepth, -print)", a[i])
		}
	}
	code := 0
	var walk func(shown, p string, depth int)
	walk = func(shown, p string, depth int) {
		fi, err := c.fs().Stat(p)
		if err != nil {
			code = c.fail(1, "'%s': %s", shown, failMessage(err))
			return
		}
		match := (typ == "" || (typ == "d") == fi.Dir)
		for _, n := range names {
			match = match && n(path.Base(p))
		}
		if match {
			c.printf("%s\n", shown)
		}
		if !fi.Dir || depth == maxDepth {
			return
		}
		list, _ := c.fs().ReadDir(p)
		for _, e := range list {
			walk(strings.TrimSuffix(shown, "/")+"/"+e.Name, path.Join(p, e.Name), depth+1)
		}
	}
	for _, r := range roots {
		walk(r, c.path(r), 0)
	}
	return code
}

// cmdStat is `stat [-c FORMAT] FILE…`.
func cmdStat(_ context.Context, c *Cmd) int {
	format := ""
	var files []string
	a := c.Args[1:]
	for i := 0; i < len(a); i++ {
		switch {
		case (a[i] == "-c" || a[i] == "--format") && i+1 < len(a):
			i++
			format = a[i]
		case strings.HasPrefix(a[i], "-c"):
			format = a[i][2:]
		case a[i] == "-L":
		default:
			files = append(files, a[i])
		}
	}
	if len(files) == 0 {
		return c.fail(1, "Needs 1 argument")
	}
	code := 0
	for _, f := range files {
		fi, err := c.fs().Stat(c.path(f))
		if err != nil {
			code = c.fail(1, "%s: %s", f, failMessage(err))
			continue
		}
		if format != "" {
			c.printf("%s\n", statFormat(format, f, fi))
			continue
		}
		kind := "regular file"
		if fi.Dir {
			kind = "directory"
		} else if fi.Size == 0 {
			kind = "regular empty file"
		}
		c.printf("  File: %s\n  Size: %d\t Blocks: %d\t IO Blocks: 4096\t%s\n", f, fi.Size, (fi.Size+511)/512, kind)
		c.printf("Device: fd05h/64773d\t Inode: %d\t Links: 1\n", fi.Ino)
		c.printf("Access: (%04o/%s)\tUid: ( 2000/   shell)\tGid: ( 2000/   shell)\n", fi.Mode.Perm(), modeString(fi))
		t := fi.MTime.UTC().Format("2006-01-02 15:04:05.000000000 -0700")
		c.printf("Access: %s\nModify: %s\nChange: %s\n", t, t, t)
	}
	return code
}

func modeString(fi FileInfo) string {
	s := []byte("-rwxrwxrwx")
	if fi.Dir {
		s[0] = 'd'
	}
	for i := 0; i < 9; i++ {
		if fi.Mode.Perm()&(1<<(8-i)) == 0 {
			s[i+1] = '-'
		}
	}
	return string(s)
}

func statFormat(f, name string, fi FileInfo) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'n':
			b.WriteString(name)
		case 's':
			b.WriteString(strconv.FormatInt(fi.Size, 10))
		case 'a':
			b.WriteString(strconv.FormatUint(uint64(fi.Mode.Perm()), 8))
		case 'A':
			b.WriteString(modeString(fi))
		case 'F':
			switch {
			case fi.Dir:
				b.WriteString("directory")
			case fi.Size == 0:
				b.WriteString("regular empty file")
			default:
				b.WriteString("regular file")
			}
		case 'i':
			b.WriteString(strconv.FormatUint(fi.Ino, 10))
		case 'u', 'g':
			b.WriteString("2000")
		case 'U', 'G':
			b.WriteString("shell")
		case 'Y', 'X', 'Z':
			b.WriteString(strconv.FormatInt(fi.MTime.Unix(), 10))
		case 'y', 'x', 'z':
			b.WriteString(fi.MTime.UTC().Format("2006-01-02 15:04:05.000000000 -0700"))
		case 'b':
			b.WriteString(strconv.FormatInt((fi.Size+511)/512, 10))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

// cmdDf reports the phone's mounts (fixed sizes: the simulated storage
// does not fill up).
func cmdDf(_ context.Context, c *Cmd) int {
	flags, paths := split(c.Args[1:])
	mounts := []struct {
		fs, at     string
		size, used int64 // KiB
	}{
		{"/dev/block/dm-4", "/", 5988412, 5961288},
		{"tmpfs", "/dev", 2980556, 1428},
		{"/dev/block/dm-5", "/vendor", 772248, 771432},
		{"/dev/block/dm-48", "/data", 116214976, 21733020},
		{"/dev/fuse", "/storage/emulated", 116214976, 21733020},
	}
	if len(paths) > 0 {
		// Each path is reported by the mount holding it (the longest match).
		all := mounts
		mounts = mounts[:0:0]
		for _, p := range paths {
			best := all[0]
			for _, m := range all {
				cp := c.path(p)
				if (cp == m.at || strings.HasPrefix(cp, strings.TrimSuffix(m.at, "/")+"/")) && len(m.at) > len(best.at) {
					best = m
				}
			}
			mounts = append(mounts, best)
		}
	}
	if strings.Contains(flags, "h") {
		c.printf("Filesystem        Size Used Avail Use%% Mounted on\n")
		for _, m := range mounts {
			c.printf("%-16s %5s %4s %5s %3d%% %s\n", m.fs, human(m.size), human(m.used), human(m.size-m.used), (m.used*100+m.size-1)/m.size, m.at)
		}
		return 0
	}
	c.printf("Filesystem       1K-blocks     Used Available Use%% Mounted on\n")
	for _, m := range mounts {
		c.printf("%-16s %9d %9d %9d %3d%% %s\n", m.fs, m.size, m.used, m.size-m.used, (m.used*100+m.size-1)/m.size, m.at)
	}
	return 0
}

func human(kib int64) string {
	switch {
	case kib >= 1<<20:
		return fmt.Sprintf("%.0fG", float64(kib)/(1<<20))
	case kib >= 1<<10:
		return fmt.Sprintf("%.0fM", float64(kib)/(1<<10))
	}
	return fmt.Sprintf("%dK", kib)
}

// sedCmd is one `s/RE/REPL/FLAGS`, `/RE/d` or `/RE/p` command.
type sedCmd struct {
	op     byte // 's', 'd' or 'p'
	re     *regexp.Regexp
	repl   string
	global bool
	print  bool // the p flag of s
}

// parseSed parses the substitutions, deletions and prints tools send.
func parseSed(s string, extended bool) ([]sedCmd, error) {
	var out []sedCmd
	for _, cmd := range strings.Split(s, ";") {
		cmd = strings.TrimSpace(cmd)
		if cmd == "" {
			continue
		}
		var sc sedCmd
		var pat string
		switch {
		case len(cmd) > 3 && cmd[0] == 's':
			parts := splitUnescaped(cmd[2:], cmd[1])
			if len(parts) != 3 {
				return nil, fmt.Errorf("unterminated command %q", cmd)
			}
			sc.op, pat, sc.repl = 's', parts[0], sedRepl(parts[1])
			sc.global = strings.Contains(parts[2], "g")
			sc.print = strings.Contains(parts[2], "p")
		case len(cmd) > 2 && cmd[0] == '/' && (strings.HasSuffix(cmd, "/d") || strings.HasSuffix(cmd, "/p")):
			sc.op, pat = cmd[len(cmd)-1], cmd[1:len(cmd)-2]
		default:
			return nil, fmt.Errorf("unsupported command %q (this device's sed runs s///, /RE/d and /RE/p)", cmd)
		}
		if !extended {
			pat = basicRegexp(pat)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("bad regex %q: %v", pat, err)
		}
		sc.re = re
		out = append(out, sc)
	}
	return out, nil
}

// basicRegexp turns a POSIX basic regexp into Go syntax: \( \) \{ \} \+
// \? \| are the operators and the bare characters are literals.
func basicRegexp(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '\\' && i+1 < len(p) && strings.IndexByte("(){}+?|", p[i+1]) >= 0:
			b.WriteByte(p[i+1])
			i++
		case ch == '\\' && i+1 < len(p):
			b.WriteByte(ch)
			b.WriteByte(p[i+1])
			i++
		case strings.IndexByte("(){}+?|", ch) >= 0:
			b.WriteByte('\\')
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func splitUnescaped(s string, sep byte) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == sep:
			cur.WriteByte(sep)
			i++
		case s[i] == sep:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(parts, cur.String())
}

// sedRepl turns sed's \1 and & into Go's ${1} and ${0}.
func sedRepl(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		switch {
		case r[i] == '\\' && i+1 < len(r) && r[i+1] >= '0' && r[i+1] <= '9':
			b.WriteString("${" + string(r[i+1]) + "}")
			i++
		case r[i] == '\\' && i+1 < len(r) && r[i+1] == 'n':
			b.WriteByte('\n')
			i++
		case r[i] == '\\' && i+1 < len(r):
			b.WriteByte(r[i+1])
			i++
		case r[i] == '&':
			b.WriteString("${0}")
		case r[i] == '$':
			b.WriteString("$$")
		default:
			b.WriteByte(r[i])
		}
	}
	return b.String()
}

// sed runs the commands over text, line by line.
func sed(prog []sedCmd, text string, quiet bool) []byte {
	var out bytes.Buffer
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
lines:
	for _, line := range strings.Split(text, "\n") {
		for _, sc := range prog {
			loc := sc.re.FindStringSubmatchIndex(line)
			if loc == nil {
				continue
			}
			switch sc.op {
			case 'd':
				continue lines
			case 'p':
				out.WriteString(line + "\n")
			case 's':
				if sc.global {
					line = sc.re.ReplaceAllString(line, sc.repl)
				} else {
					line = line[:loc[0]] + string(sc.re.ExpandString(nil, sc.repl, line, loc)) + line[loc[1]:]
				}
				if sc.print {
					out.WriteString(line + "\n")
				}
			}
		}
		if !quiet {
			out.WriteString(line + "\n")
		}
	}
	return out.Bytes()
}

// cmdSed is `sed [-n] [-E|-r] [-i] [-e SCRIPT]… [SCRIPT] [FILE…]`.
func cmdSed(_ context.Context, c *Cmd) int {
	var scripts, files []string
	quiet, extended, inPlace := false, false, false
	a := c.Args[1:]
	for i := 0; i < len(a); i++ {
		switch {
		case a[i] == "-e" && i+1 < len(a):
			i++
			scripts = append(scripts, a[i])
		case a[i] == "-n":
			quiet = true
		case a[i] == "-E" || a[i] == "-r":
			extended = true
		case a[i] == "-i":
			inPlace = true
		case strings.HasPrefix(a[i], "-") && len(a[i]) > 1:
			return c.fail(1, "unknown option %s", a[i])
		case len(scripts) == 0:
			scripts = append(scripts, a[i])
		default:
			files = append(files, a[i])
		}
	}
	if len(scripts) == 0 {
		return c.fail(1, "no script")
	}
	prog, err := parseSed(strings.Join(scripts, ";"), extended)
	if err != nil {
		return c.fail(1, "%v", err)
	}
	if !inPlace {
		return c.inputs(files, func(_ string, data []byte) { c.Stdout.Write(sed(prog, string(data), quiet)) })
	}
	code := 0
	for _, f := range files {
		data, err := c.fs().ReadFile(c.path(f))
		if err == nil {
			err = c.fs().WriteFile(c.path(f), sed(prog, string(data), quiet), 0o644)
		}
		if err != nil {
			code = c.fail(1, "%s: %s", f, failMessage(err))
		}
	}
	return code
}

// cmdBase64 is `base64 [-d] [-w COLUMNS] [FILE]`.
func cmdBase64(_ context.Context, c *Cmd) int {
	decode, wrap := false, 76
	var files []string
	a := c.Args[1:]
	for i := 0; i < len(a); i++ {
		switch {
		case a[i] == "-d" || a[i] == "--decode":
			decode = true
		case a[i] == "-w" && i+1 < len(a):
			i++
			wrap, _ = strconv.Atoi(a[i])
		case strings.HasPrefix(a[i], "-w"):
			wrap, _ = strconv.Atoi(a[i][2:])
		case a[i] == "-i":
		default:
			files = append(files, a[i])
		}
	}
	code := 0
	rc := c.inputs(files, func(_ string, data []byte) {
		if decode {
			out, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(data)), ""))
			if err != nil {
				code = c.fail(1, "bad input")
				return
			}
			c.Stdout.Write(out)
			return
		}
		enc := base64.StdEncoding.EncodeToString(data)
		for wrap > 0 && len(enc) > wrap {
			c.printf("%s\n", enc[:wrap])
			enc = enc[wrap:]
		}
		c.printf("%s\n", enc)
	})
	return max(code, rc)
}

// cmdWhich is `which [-a] NAME…`: the simulated commands live in
// /system/bin.
func cmdWhich(_ context.Context, c *Cmd) int {
	_, names := split(c.Args[1:])
	code := 0
	for _, n := range names {
		if _, ok := commands[n]; ok {
			c.printf("/system/bin/%s\n", n)
		} else {
			code = 1
		}
	}
	return code
}

// cmdAppops is `appops get|set|reset PACKAGE [OP [MODE]]`: the simulated
// apps ask for no runtime permissions, so every op reads as default and
// setting one is remembered for get.
func cmdAppops(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) < 2 || (a[0] != "get" && a[0] != "set" && a[0] != "reset" && a[0] != "query-op") {
		c.printf("AppOps service (appops) commands:\n  set [--user <USER_ID>] <PACKAGE | UID> <OP> <MODE>\n  get [--user <USER_ID>] <PACKAGE | UID> [<OP>]\n  reset [--user <USER_ID>] [<PACKAGE>]\n")
		return 255
	}
	if a[1] == "--user" && len(a) > 3 {
		a = append(a[:1], a[3:]...)
	}
	if _, ok := c.s.pkg(a[1]); !ok {
		c.printf("Error: Unknown package: %s\n", a[1])
		return 255
	}
	key := func(op string) string { return a[1] + "/" + op }
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	switch a[0] {
	case "set":
		if len(a) < 4 {
			return c.fail(255, "set needs an op and a mode")
		}
		c.s.appops[key(a[2])] = a[3]
	case "reset":
		for k := range c.s.appops {
			if strings.HasPrefix(k, a[1]+"/") {
				delete(c.s.appops, k)
			}
		}
	case "get":
		var ops []string
		for k, mode := range c.s.appops {
			if op, ok := strings.CutPrefix(k, a[1]+"/"); ok && (len(a) < 3 || a[2] == op) {
				ops = append(ops, op+": "+mode)
			}
		}
		if len(ops) == 0 {
			if len(a) >= 3 {
				c.printf("%s: default\n", a[2])
			} else {
				c.printf("No operations.\n")
			}
		}
		sort.Strings(ops)
		for _, o := range ops {
			c.printf("%s\n", o)
		}
	}
	return 0
}

// svcSettings are the settings `svc NAME enable|disable` switches.
var svcSettings = map[string]string{"wifi": "wifi_on", "data": "mobile_data", "bluetooth": "bluetooth_on", "nfc": "nfc_on"}

// cmdSvc is `svc wifi|data|bluetooth|nfc enable|disable` and `svc power
// stayon true|false|usb|ac|wireless`.
func cmdSvc(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	switch {
	case len(a) == 2 && svcSettings[a[0]] != "" && (a[1] == "enable" || a[1] == "disable"):
		v := "0"
		if a[1] == "enable" {
			v = "1"
		}
		c.phone().PutSetting("global", svcSettings[a[0]], v)
		return 0
	case len(a) == 3 && a[0] == "power" && a[1] == "stayon":
		v := map[string]string{"true": "7", "false": "0", "ac": "1", "usb": "2", "wireless": "4"}[a[2]]
		if v == "" {
			return c.fail(1, "usage: svc power stayon [true|false|usb|ac|wireless]")
		}
		c.phone().PutSetting("global", "stay_on_while_plugged_in", v)
		return 0
	}
	c.printf("Available commands:\n    help     Show information about the subcommands\n    power    Control the power manager\n    data     Control mobile data connectivity\n    wifi     Control the Wi-Fi manager\n    bluetooth Control Bluetooth service\n    nfc      Control NFC functions\n")
	if len(a) == 0 || a[0] == "help" {
		return 0
	}
	return 1
}
