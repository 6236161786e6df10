package adbd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// shellEnv is the environment of `adb shell` on an Android 10+ phone.
var shellEnv = []string{
	"PATH=/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin",
	"ANDROID_DATA=/data", "ANDROID_ROOT=/system", "ANDROID_STORAGE=/storage",
	"EXTERNAL_STORAGE=/sdcard", "HOME=/", "TMPDIR=/data/local/tmp", "USER=shell", "LOGNAME=shell",
	"SHELL=/system/bin/sh", "HOSTNAME=localhost",
}

// binDirs are where a command given by path is looked up by its base name.
var binDirs = map[string]bool{"/system/bin": true, "/system/xbin": true, "/vendor/bin": true, "/product/bin": true, "/bin": true}

// RunShell runs a shell script the way `adb shell` does on the device: a
// POSIX shell whose external commands are the simulated Android tools.
// It returns the exit status. stdin may be nil.
func (s *Server) RunShell(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) int {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangMirBSDKorn)).Parse(strings.NewReader(script), "")
	if err != nil {
		fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
		return 1
	}
	if args := plainCall(file); args != nil {
		if cmd, _, ok := lookCommand(args[0]); ok {
			// What the interpreter would do with this line, without its
			// start (a pipe and a goroutine for stdin, the runner's state):
			// most of an `exec:` screencap's cost besides the screenshot.
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			return cmd(ctx, &Cmd{s: s, Args: args, Dir: "/", Env: plainEnv(), Stdin: stdin, Stdout: stdout, Stderr: stderr})
		}
	}
	in, cleanup, err := stdinFile(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "/system/bin/sh: stdin: %v\n", err)
		return 1
	}
	defer cleanup()
	r, err := interp.New(
		interp.StdIO(in, stdout, stderr),
		interp.Env(expand.ListEnviron(shellEnv...)),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return s.exec }),
		interp.CallHandler(boundStrings),
		interp.OpenHandler(s.openFile),
		interp.StatHandler(s.statFile),
		interp.ReadDirHandler2(s.readDir),
		interp.AccessHandler(s.access),
	)
	if err != nil {
		fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
		return 1
	}
	r.Dir = "/"
	err = r.Run(ctx, file)
	if err == nil {
		return 0
	}
	if code, ok := interp.IsExitStatus(err); ok {
		return int(code)
	}
	if ctx.Err() != nil {
		return 130
	}
	fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
	return 1
}

// MaxShellStrings bounds the strings one shell on the simulated phone
// keeps at a time: its variables, a command's arguments and the output a
// command substitution has read so far. The interpreter keeps them in
// memory, where a doubling loop would take all there is.
const MaxShellStrings = 16 << 20

// boundStrings stops a script whose strings pass MaxShellStrings, checked
// before every command (builtins too).
func boundStrings(ctx context.Context, args []string) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	n := 0
	for _, a := range args {
		n += len(a)
	}
	if b, ok := hc.Stdout.(*strings.Builder); ok { // $(…) reading
		n += b.Len()
	}
	hc.Env.Each(func(_ string, vr expand.Variable) bool {
		n += len(vr.Str)
		for _, v := range vr.List {
			n += len(v)
		}
		for k, v := range vr.Map {
			n += len(k) + len(v)
		}
		return n <= MaxShellStrings
	})
	if n > MaxShellStrings {
		return nil, fmt.Errorf("stopped: the script's strings (variables, a command's arguments, output read by $(…)) passed the simulated phone's bound of %d bytes", MaxShellStrings)
	}
	return args, nil
}

// stdinFile gives the interpreter an *os.File for stdin (it needs one),
// fed from r by a goroutine that ends when r does or cleanup runs.
func stdinFile(r io.Reader) (*os.File, func(), error) {
	if r == nil {
		return nil, func() {}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	go func() {
		io.Copy(pw, r)
		pw.Close()
	}()
	return pr, func() { pr.Close(); pw.Close() }, nil
}

// plainCall returns the words of a script that is one command of plain
// words (no quotes, expansions, globs, redirections, assignments or
// operators), as the shell's parser read it; nil for anything else, which
// the interpreter runs.
func plainCall(file *syntax.File) []string {
	if len(file.Stmts) != 1 {
		return nil
	}
	st := file.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || st.Disown || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil
	}
	args := make([]string, len(call.Args))
	for i, w := range call.Args {
		if len(w.Parts) != 1 {
			return nil
		}
		lit, ok := w.Parts[0].(*syntax.Lit)
		// Backslashes (quote removal), braces, tildes and glob characters
		// are the interpreter's to expand.
		if !ok || strings.ContainsAny(lit.Value, `\{}~*?[]`) {
			return nil
		}
		args[i] = lit.Value
	}
	if interp.IsBuiltin(args[0]) {
		return nil
	}
	return args
}

// plainEnv is the environment of a plain command line: the shell's, with
// the working directory it starts in.
var plainEnv = sync.OnceValue(func() expand.Environ {
	return expand.ListEnviron(append([]string{"PWD=/"}, shellEnv...)...)
})

// lookCommand finds a simulated Android command by its name or its path
// in one of binDirs. name is the name it goes by, "" for a path elsewhere.
func lookCommand(arg0 string) (cmd command, name string, ok bool) {
	name = arg0
	if strings.Contains(name, "/") {
		if !binDirs[path.Dir(name)] {
			return nil, "", false
		}
		name = path.Base(name)
	}
	cmd, ok = commands[name]
	return cmd, name, ok
}

// exec runs one external command; it never reaches the host's programs.
func (s *Server) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	cmd, name, ok := lookCommand(args[0])
	if !ok && name != "" && interp.IsBuiltin(name) {
		// `exec echo …`, `nohup true`, `/system/bin/echo`: toybox has
		// these as programs too. By its name: a path would come back here.
		return exitStatus(s.RunShell(ctx, shellJoin(append([]string{name}, args[1:]...)), hc.Stdin, hc.Stdout, hc.Stderr))
	}
	if !ok {
		fmt.Fprintf(hc.Stderr, "/system/bin/sh: %s: inaccessible or not found\n", args[0])
		return interp.NewExitStatus(127)
	}
	stdin := hc.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	return exitStatus(cmd(ctx, &Cmd{s: s, Args: args, Dir: hc.Dir, Env: hc.Env, Stdin: stdin, Stdout: hc.Stdout, Stderr: hc.Stderr}))
}

func exitStatus(code int) error {
	if code != 0 {
		return interp.NewExitStatus(uint8(code))
	}
	return nil
}

// Cmd is one invocation of a simulated Android command.
type Cmd struct {
	s      *Server
	Args   []string
	Dir    string
	Env    expand.Environ // nil outside a shell (abb_exec)
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

func (c *Cmd) phone() Phone { return c.s.phone }
func (c *Cmd) fs() *FS      { return c.s.fs }

// env returns a variable of the shell's environment.
func (c *Cmd) env(name string) string {
	if c.Env == nil {
		return ""
	}
	return c.Env.Get(name).String()
}

func (c *Cmd) path(p string) string {
	return Clean(c.Dir, p)
}

// fail prints "name: msg" on stderr and returns code.
func (c *Cmd) fail(code int, format string, a ...any) int {
	fmt.Fprintf(c.Stderr, "%s: %s\n", path.Base(c.Args[0]), fmt.Sprintf(format, a...))
	return code
}

func (c *Cmd) printf(format string, a ...any) { fmt.Fprintf(c.Stdout, format, a...) }

type command func(ctx context.Context, c *Cmd) int

// commands is filled by the cmd_*.go files' init functions.
var commands = map[string]command{}

func (s *Server) openFile(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	p := Clean(hc.Dir, name)
	switch p {
	case "/dev/null":
		return devNull{}, nil
	case "/dev/tty", "/dev/stdout":
		return nopReader{hc.Stdout}, nil
	case "/dev/stderr":
		return nopReader{hc.Stderr}, nil
	}
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		data, err := s.fs.ReadFile(p)
		if err != nil {
			return nil, pathErr(name, err)
		}
		return nopWriter{bytes.NewReader(data)}, nil
	}
	if flag&os.O_APPEND == 0 || flag&os.O_TRUNC != 0 {
		if fi, err := s.fs.Stat(p); err == nil && fi.Dir {
			return nil, &fs.PathError{Op: "open", Path: name, Err: errIsDir}
		}
		if err := s.fs.WriteFile(p, nil, perm); err != nil {
			return nil, pathErr(name, err)
		}
	}
	return &fsAppender{fs: s.fs, path: p}, nil
}

func pathErr(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return &fs.PathError{Op: "open", Path: name, Err: err}
}

func (s *Server) statFile(ctx context.Context, name string, _ bool) (fs.FileInfo, error) {
	fi, err := s.fs.Stat(Clean(interp.HandlerCtx(ctx).Dir, name))
	if err != nil {
		return nil, err
	}
	return fileInfo{fi}, nil
}

func (s *Server) readDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	list, err := s.fs.ReadDir(Clean(interp.HandlerCtx(ctx).Dir, name))
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(list))
	for i, fi := range list {
		out[i] = fs.FileInfoToDirEntry(fileInfo{fi})
	}
	return out, nil
}

func (s *Server) access(ctx context.Context, name string, _ interp.AccessMode) error {
	_, err := s.fs.Stat(name)
	return err
}

// fileInfo adapts FileInfo to fs.FileInfo.
type fileInfo struct{ fi FileInfo }

func (f fileInfo) Name() string       { return f.fi.Name }
func (f fileInfo) Size() int64        { return f.fi.Size }
func (f fileInfo) ModTime() time.Time { return f.fi.MTime }
func (f fileInfo) IsDir() bool        { return f.fi.Dir }
func (f fileInfo) Sys() any           { return nil }
func (f fileInfo) Mode() fs.FileMode {
	if f.fi.Dir {
		return fs.ModeDir | f.fi.Mode.Perm()
	}
	return f.fi.Mode.Perm()
}

type fsAppender struct {
	fs   *FS
	path string
}

func (a *fsAppender) Write(p []byte) (int, error) {
	if err := a.fs.AppendFile(a.path, p); err != nil {
		return 0, err
	}
	return len(p), nil
}
func (a *fsAppender) Read([]byte) (int, error) { return 0, io.EOF }
func (a *fsAppender) Close() error             { return nil }

type devNull struct{}

func (devNull) Read([]byte) (int, error)    { return 0, io.EOF }
func (devNull) Write(p []byte) (int, error) { return len(p), nil }
func (devNull) Close() error                { return nil }

type nopReader struct{ io.Writer }

func (nopReader) Read([]byte) (int, error) { return 0, io.EOF }
func (nopReader) Close() error             { return nil }

type nopWriter struct{ io.Reader }

func (nopWriter) Write([]byte) (int, error) { return 0, errors.New("bad file descriptor") }
func (nopWriter) Close() error              { return nil }
