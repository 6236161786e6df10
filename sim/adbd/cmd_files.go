package adbd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func init() {
	commands["cat"] = cmdCat
	commands["ls"] = cmdLs
	commands["mkdir"] = cmdMkdir
	commands["rm"] = cmdRm
	commands["rmdir"] = cmdRm
	commands["touch"] = cmdTouch
	commands["cp"] = cmdCp
	commands["mv"] = cmdCp
	commands["grep"] = cmdGrep
	commands["head"] = cmdHeadTail
	commands["tail"] = cmdHeadTail
	commands["wc"] = cmdWc
	commands["md5sum"] = cmdMd5sum
	commands["sleep"] = cmdSleep
	commands["nohup"] = func(ctx context.Context, c *Cmd) int {
		if len(c.Args) < 2 {
			return c.fail(125, "missing command")
		}
		return c.s.RunShell(ctx, shellJoin(c.Args[1:]), c.Stdin, c.Stdout, c.Stderr)
	}
	commands["chmod"] = func(_ context.Context, c *Cmd) int { return existing(c, c.Args[2:]) }
	commands["sync"] = func(context.Context, *Cmd) int { return 0 }
}

// split separates flags (a leading "-x" word) from operands.
func split(args []string) (flags string, ops []string) {
	for i, a := range args {
		if a == "--" {
			return flags, append(ops, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			flags += a[1:]
			continue
		}
		ops = append(ops, a)
	}
	return flags, ops
}

func existing(c *Cmd, files []string) int {
	code := 0
	for _, f := range files {
		if _, err := c.fs().Stat(c.path(f)); err != nil {
			code = c.fail(1, "%s: %s", f, failMessage(err))
		}
	}
	return code
}

// inputs returns the contents of each operand, or stdin when there is none.
func (c *Cmd) inputs(ops []string, each func(name string, data []byte)) int {
	if len(ops) == 0 {
		data, _ := io.ReadAll(c.Stdin)
		each("-", data)
		return 0
	}
	code := 0
	for _, f := range ops {
		if f == "-" {
			data, _ := io.ReadAll(c.Stdin)
			each(f, data)
			continue
		}
		data, err := c.fs().ReadFile(c.path(f))
		if err != nil {
			code = c.fail(1, "%s: %s", f, failMessage(err))
			continue
		}
		each(f, data)
	}
	return code
}

func cmdCat(_ context.Context, c *Cmd) int {
	_, ops := split(c.Args[1:])
	return c.inputs(ops, func(_ string, data []byte) { c.Stdout.Write(data) })
}

func cmdLs(_ context.Context, c *Cmd) int {
	flags, ops := split(c.Args[1:])
	long, all := strings.Contains(flags, "l"), strings.Contains(flags, "a")
	if len(ops) == 0 {
		ops = []string{"."}
	}
	code := 0
	for _, op := range ops {
		p := c.path(op)
		fi, err := c.fs().Stat(p)
		if err != nil {
			code = c.fail(1, "%s: %s", op, failMessage(err))
			continue
		}
		list := []FileInfo{fi}
		if fi.Dir && !strings.Contains(flags, "d") {
			list, _ = c.fs().ReadDir(p)
			if len(ops) > 1 {
				c.printf("%s:\n", op)
			}
		} else {
			list[0].Name = op
		}
		for _, e := range list {
			if !all && strings.HasPrefix(e.Name, ".") {
				continue
			}
			if long {
				kind, mode := "-", e.Mode.Perm().String()[1:]
				if e.Dir {
					kind = "d"
				}
				c.printf("%s%s 1 shell shell %8d %s %s\n", kind, mode, e.Size, e.MTime.UTC().Format("2006-01-02 15:04"), e.Name)
			} else {
				c.printf("%s\n", e.Name)
			}
		}
	}
	return code
}

func cmdMkdir(_ context.Context, c *Cmd) int {
	flags, ops := split(c.Args[1:])
	code := 0
	for _, op := range ops {
		var err error
		if strings.Contains(flags, "p") {
			err = c.fs().MkdirAll(c.path(op))
		} else {
			err = c.fs().Mkdir(c.path(op))
		}
		if err != nil {
			code = c.fail(1, "'%s': %s", op, failMessage(err))
		}
	}
	return code
}

func cmdRm(_ context.Context, c *Cmd) int {
	flags, ops := split(c.Args[1:])
	recursive, force := strings.ContainsAny(flags, "rR"), strings.Contains(flags, "f")
	code := 0
	for _, op := range ops {
		p := c.path(op)
		fi, err := c.fs().Stat(p)
		if err != nil {
			if !force {
				code = c.fail(1, "%s: %s", op, failMessage(err))
			}
			continue
		}
		if fi.Dir && !recursive && c.Args[0] != "rmdir" {
			code = c.fail(1, "%s: Is a directory", op)
			continue
		}
		if err := c.fs().Remove(p, recursive); err != nil {
			code = c.fail(1, "%s: %s", op, failMessage(err))
		}
	}
	return code
}

func cmdTouch(_ context.Context, c *Cmd) int {
	_, ops := split(c.Args[1:])
	code := 0
	for _, op := range ops {
		p := c.path(op)
		if _, err := c.fs().Stat(p); err == nil {
			c.fs().SetMTime(p, time.Now())
		} else if err := c.fs().AppendFile(p, nil); err != nil {
			code = c.fail(1, "'%s': %s", op, failMessage(err))
		}
	}
	return code
}

func cmdCp(_ context.Context, c *Cmd) int {
	_, ops := split(c.Args[1:])
	if len(ops) != 2 {
		return c.fail(1, "needs a source and a destination (directories are not copied)")
	}
	src, dst := c.path(ops[0]), c.path(ops[1])
	data, err := c.fs().ReadFile(src)
	if err != nil {
		return c.fail(1, "%s: %s", ops[0], failMessage(err))
	}
	if fi, err := c.fs().Stat(dst); err == nil && fi.Dir {
		dst += "/" + lastElem(src)
	}
	if err := c.fs().WriteFile(dst, data, 0o644); err != nil {
		return c.fail(1, "%s: %s", ops[1], failMessage(err))
	}
	if c.Args[0] == "mv" {
		c.fs().Remove(src, false)
	}
	return 0
}

func lastElem(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

func cmdGrep(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	var flags string
	var pattern string
	havePattern := false
	var ops []string
	for i := 0; i < len(a); i++ {
		switch {
		case a[i] == "-e" && i+1 < len(a):
			pattern, havePattern = a[i+1], true
			i++
		case len(a[i]) > 1 && a[i][0] == '-':
			flags += a[i][1:]
		case !havePattern:
			pattern, havePattern = a[i], true
		default:
			ops = append(ops, a[i])
		}
	}
	if !havePattern {
		return c.fail(2, "no pattern")
	}
	if strings.Contains(flags, "F") {
		pattern = regexp.QuoteMeta(pattern)
	} else if !strings.Contains(flags, "E") {
		// basic regular expressions: \| \( \) are the operators, | ( ) literals
		pattern = basicToExtended(pattern)
	}
	if strings.Contains(flags, "i") {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return c.fail(2, "bad regex '%s': %v", pattern, err)
	}
	invert, count, quiet := strings.Contains(flags, "v"), strings.Contains(flags, "c"), strings.Contains(flags, "q")
	matched := 0
	code := c.inputs(ops, func(name string, data []byte) {
		n := 0
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for sc.Scan() {
			if re.Match(sc.Bytes()) != invert {
				n++
				if !count && !quiet {
					if len(ops) > 1 {
						c.printf("%s:", name)
					}
					c.printf("%s\n", sc.Bytes())
				}
			}
		}
		if count {
			c.printf("%d\n", n)
		}
		matched += n
	})
	switch {
	case code != 0:
		return 2
	case matched == 0:
		return 1
	}
	return 0
}

func basicToExtended(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p) && strings.IndexByte("|(){}+?", p[i+1]) >= 0:
			b.WriteByte(p[i+1])
			i++
		case strings.IndexByte("|(){}+?", p[i]) >= 0:
			b.WriteByte('\\')
			b.WriteByte(p[i])
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}

func cmdHeadTail(_ context.Context, c *Cmd) int {
	n := 10
	var ops []string
	a := c.Args[1:]
	for i := 0; i < len(a); i++ {
		switch {
		case a[i] == "-n" && i+1 < len(a):
			n, _ = strconv.Atoi(a[i+1])
			i++
		case len(a[i]) > 1 && a[i][0] == '-':
			if v, err := strconv.Atoi(strings.TrimPrefix(a[i][1:], "n")); err == nil {
				n = v
			}
		default:
			ops = append(ops, a[i])
		}
	}
	return c.inputs(ops, func(_ string, data []byte) {
		lines := strings.SplitAfter(string(data), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if c.Args[0] == "head" {
			lines = lines[:min(n, len(lines))]
		} else {
			lines = lines[max(0, len(lines)-n):]
		}
		io.WriteString(c.Stdout, strings.Join(lines, ""))
	})
}

func cmdWc(_ context.Context, c *Cmd) int {
	flags, ops := split(c.Args[1:])
	return c.inputs(ops, func(name string, data []byte) {
		l, w, b := bytes.Count(data, []byte("\n")), len(bytes.Fields(data)), len(data)
		var parts []string
		if flags == "" || strings.Contains(flags, "l") {
			parts = append(parts, strconv.Itoa(l))
		}
		if flags == "" || strings.Contains(flags, "w") {
			parts = append(parts, strconv.Itoa(w))
		}
		if flags == "" || strings.Contains(flags, "c") {
			parts = append(parts, strconv.Itoa(b))
		}
		if name != "-" {
			parts = append(parts, name)
		}
		c.printf("%s\n", strings.Join(parts, " "))
	})
}

func cmdMd5sum(_ context.Context, c *Cmd) int {
	_, ops := split(c.Args[1:])
	return c.inputs(ops, func(name string, data []byte) {
		c.printf("%x  %s\n", md5.Sum(data), name)
	})
}

func cmdSleep(ctx context.Context, c *Cmd) int {
	if len(c.Args) != 2 {
		return c.fail(1, "usage: sleep SECONDS")
	}
	sec, err := strconv.ParseFloat(strings.TrimSuffix(c.Args[1], "s"), 64)
	if err != nil || sec < 0 {
		return c.fail(1, "invalid time interval '%s'", c.Args[1])
	}
	t := time.NewTimer(time.Duration(sec * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return 0
	case <-ctx.Done():
		return 130
	}
}
