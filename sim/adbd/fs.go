package adbd

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// FS is the device's in-memory file system: what `adb push`/`pull`, shell
// redirections, `screencap FILE` and `uiautomator dump FILE` read and write.
// It holds directories and regular files only. Safe for concurrent use.
type FS struct {
	mu    sync.Mutex
	nodes map[string]*node
	ino   uint64
	// used is the bytes its files hold; maxFile and maxTotal bound one
	// file and all of them (SetLimits).
	used              int64
	maxFile, maxTotal int64
}

// Default bounds of an FS: what a client can make the simulated phone
// keep in memory (docs/security.md).
const (
	DefaultMaxFile  = 128 << 20
	DefaultMaxTotal = 256 << 20
)

// ErrNoSpace is a write past an FS's bounds.
var ErrNoSpace = errors.New("No space left on device")

// SetLimits bounds one file to maxFile bytes and all files together to
// maxTotal (0 leaves a bound as it is).
func (f *FS) SetLimits(maxFile, maxTotal int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if maxFile > 0 {
		f.maxFile = maxFile
	}
	if maxTotal > 0 {
		f.maxTotal = maxTotal
	}
}

// MaxFile is the most bytes one file may hold.
func (f *FS) MaxFile() int64 {
	maxFile, _ := f.Limits()
	return maxFile
}

// Limits are the bounds on one file and on all of them.
func (f *FS) Limits() (maxFile, maxTotal int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxFile, f.maxTotal
}

// spaceError says which bound a write of size bytes (the file's new size)
// passes, naming the bounds.
func (f *FS) spaceError(p string, size int64) error {
	return &fs.PathError{Op: "write", Path: p, Err: fmt.Errorf("%w: the simulated phone keeps files of at most %d bytes, %d in all (%d in use); this one would hold %d",
		ErrNoSpace, f.maxFile, f.maxTotal, f.used, size)}
}

type node struct {
	dir   bool
	data  []byte
	mode  fs.FileMode // permission bits
	mtime time.Time
	ino   uint64
}

// FileInfo describes a file of an FS.
type FileInfo struct {
	Name  string
	Dir   bool
	Size  int64
	Mode  fs.FileMode // permission bits only
	MTime time.Time
	Ino   uint64
}

// UnixMode returns the st_mode a stat call reports (type and permissions).
func (fi FileInfo) UnixMode() uint32 {
	if fi.Dir {
		return 0o040000 | uint32(fi.Mode.Perm())
	}
	return 0o100000 | uint32(fi.Mode.Perm())
}

// DefaultDirs are the directories a fresh FS has, as on a phone.
var DefaultDirs = []string{"/sdcard/Download", "/sdcard/DCIM", "/sdcard/Pictures", "/sdcard/Documents",
	"/storage/emulated/0", "/data/local/tmp", "/data/app", "/system/bin", "/dev", "/proc", "/vendor", "/cache"}

// NewFS returns a file system holding DefaultDirs.
func NewFS() *FS {
	f := &FS{nodes: map[string]*node{}, maxFile: DefaultMaxFile, maxTotal: DefaultMaxTotal}
	f.nodes["/"] = &node{dir: true, mode: 0o755, mtime: time.Now(), ino: 1}
	f.ino = 1
	for _, d := range DefaultDirs {
		if err := f.MkdirAll(d); err != nil {
			panic(err) // constant paths
		}
	}
	return f
}

// Clean makes p absolute (relative to cwd) and canonical.
func Clean(cwd, p string) string {
	if !strings.HasPrefix(p, "/") {
		p = cwd + "/" + p
	}
	return path.Clean(p)
}

func (f *FS) notExist(op, p string) error {
	return &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
}

// Stat describes the file at p.
func (f *FS) Stat(p string) (FileInfo, error) {
	p = path.Clean(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[p]
	if !ok {
		return FileInfo{}, f.notExist("stat", p)
	}
	return info(p, n), nil
}

func info(p string, n *node) FileInfo {
	return FileInfo{Name: path.Base(p), Dir: n.dir, Size: int64(len(n.data)), Mode: n.mode, MTime: n.mtime, Ino: n.ino}
}

// ReadFile returns a copy of the file's contents.
func (f *FS) ReadFile(p string) ([]byte, error) {
	p = path.Clean(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[p]
	switch {
	case !ok:
		return nil, f.notExist("open", p)
	case n.dir:
		return nil, &fs.PathError{Op: "read", Path: p, Err: errIsDir}
	}
	return append([]byte(nil), n.data...), nil
}

var (
	errIsDir    = fmt.Errorf("Is a directory")
	errNotDir   = fmt.Errorf("Not a directory")
	errNotEmpty = fmt.Errorf("Directory not empty")
)

// WriteFile creates or replaces the file at p; its directory must exist.
func (f *FS) WriteFile(p string, data []byte, mode fs.FileMode) error {
	return f.write(p, data, mode, false)
}

// AppendFile appends to the file at p, creating it when absent.
func (f *FS) AppendFile(p string, data []byte) error {
	return f.write(p, data, 0o644, true)
}

func (f *FS) write(p string, data []byte, mode fs.FileMode, appendTo bool) error {
	p = path.Clean(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	parent, ok := f.nodes[path.Dir(p)]
	if !ok {
		return f.notExist("open", p)
	}
	if !parent.dir {
		return &fs.PathError{Op: "open", Path: p, Err: errNotDir}
	}
	n, ok := f.nodes[p]
	if ok && n.dir {
		return &fs.PathError{Op: "open", Path: p, Err: errIsDir}
	}
	size, old := int64(len(data)), int64(0)
	if ok {
		old = int64(len(n.data))
	}
	if appendTo {
		size += old
	}
	if size > f.maxFile || f.used-old+size > f.maxTotal {
		return f.spaceError(p, size)
	}
	f.used += size - old
	if !ok {
		if mode.Perm() == 0 {
			mode = 0o644
		}
		f.ino++
		n = &node{mode: mode.Perm(), ino: f.ino}
		f.nodes[p] = n
	}
	if appendTo {
		n.data = append(n.data, data...)
	} else {
		n.data = append([]byte(nil), data...)
	}
	n.mtime = time.Now()
	return nil
}

// SetMTime sets a file's modification time (adb push sends one).
func (f *FS) SetMTime(p string, t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.nodes[path.Clean(p)]; ok {
		n.mtime = t
	}
}

// MkdirAll creates p and any missing parents.
func (f *FS) MkdirAll(p string) error {
	p = path.Clean(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	var todo []string
	for q := p; ; q = path.Dir(q) {
		n, ok := f.nodes[q]
		if ok {
			if !n.dir {
				return &fs.PathError{Op: "mkdir", Path: q, Err: errNotDir}
			}
			break
		}
		todo = append(todo, q)
	}
	for i := len(todo) - 1; i >= 0; i-- {
		f.ino++
		f.nodes[todo[i]] = &node{dir: true, mode: 0o755, mtime: time.Now(), ino: f.ino}
	}
	return nil
}

// Mkdir creates one directory; its parent must exist and p must not.
func (f *FS) Mkdir(p string) error {
	p = path.Clean(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.nodes[p]; ok {
		return &fs.PathError{Op: "mkdir", Path: p, Err: fs.ErrExist}
	}
	parent, ok := f.nodes[path.Dir(p)]
	if !ok {
		return f.notExist("mkdir", p)
	}
	if !parent.dir {
		return &fs.PathError{Op: "mkdir", Path: p, Err: errNotDir}
	}
	f.ino++
	f.nodes[p] = &node{dir: true, mode: 0o755, mtime: time.Now(), ino: f.ino}
	return nil
}

// Remove deletes p; a non-empty directory only when recursive.
func (f *FS) Remove(p string, recursive bool) error {
	p = path.Clean(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[p]
	if !ok {
		return f.notExist("remove", p)
	}
	if p == "/" {
		return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrPermission}
	}
	if n.dir {
		prefix := p + "/"
		var kids []string
		for q := range f.nodes {
			if strings.HasPrefix(q, prefix) {
				kids = append(kids, q)
			}
		}
		if len(kids) > 0 && !recursive {
			return &fs.PathError{Op: "remove", Path: p, Err: errNotEmpty}
		}
		for _, q := range kids {
			f.used -= int64(len(f.nodes[q].data))
			delete(f.nodes, q)
		}
	}
	f.used -= int64(len(n.data))
	delete(f.nodes, p)
	return nil
}

// ReadDir lists a directory, sorted by name.
func (f *FS) ReadDir(p string) ([]FileInfo, error) {
	p = path.Clean(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[p]
	if !ok {
		return nil, f.notExist("opendir", p)
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "opendir", Path: p, Err: errNotDir}
	}
	var out []FileInfo
	for q, kid := range f.nodes {
		if q != p && path.Dir(q) == p {
			out = append(out, info(q, kid))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
