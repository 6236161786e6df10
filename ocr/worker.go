package ocr

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apexagent/apex/internal/tail"
)

// Starting tesseract costs more than reading a region (loading eng+chi_sim
// takes hundreds of milliseconds), so the engine keeps resident tesseract
// processes in stream_filelist mode: each reads image paths from stdin, one
// per line, and writes one TSV page per image to stdout. A tiny blank
// sentinel image follows every request; its page header marks the end of
// the request's rows.

// worker is one resident tesseract process for one language set and PSM.
type worker struct {
	key    string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *tail.Buffer
	want   int // page number of the next request's image
	dead   atomic.Bool
	idle   *time.Timer
}

var fileSeq atomic.Int64

func (t *Tesseract) startWorker(key string, args []string) (*worker, error) {
	cmd := exec.Command(t.path, args...)
	cmd.Env = t.env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("ocr: start tesseract: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("ocr: start tesseract: %w", err)
	}
	w := &worker{key: key, cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 64<<10),
		stderr: tail.New(4096), want: 1}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ocr: start tesseract %s: %w", strings.Join(args, " "), err)
	}
	t.log.Debug("ocr: tesseract process started", "pid", cmd.Process.Pid, "args", args)
	return w, nil
}

// recognize writes img to a file, asks the process to read it and returns
// the TSV rows of its page. Cancelling ctx kills the process.
func (w *worker) recognize(ctx context.Context, dir, sentinel string, img []byte) ([]byte, error) {
	name := filepath.Join(dir, "in-"+strconv.FormatInt(fileSeq.Add(1), 10))
	if err := os.WriteFile(name, img, 0o600); err != nil {
		return nil, fmt.Errorf("ocr: write image for tesseract: %w", err)
	}
	defer os.Remove(name)
	stop := context.AfterFunc(ctx, w.kill)
	defer stop()
	if _, err := io.WriteString(w.stdin, name+"\n"+sentinel+"\n"); err != nil {
		return nil, w.fail(ctx, err)
	}
	var rows bytes.Buffer
	rows.WriteString(strings.Join(tsvColumns, "\t") + "\n")
	for {
		line, err := w.out.ReadString('\n')
		if err != nil {
			return nil, w.fail(ctx, err)
		}
		if strings.HasPrefix(line, "level\t") {
			continue
		}
		level, page, ok := rowPage(line)
		if !ok {
			return nil, w.fail(ctx, fmt.Errorf("unexpected output %q", strings.TrimSpace(line)))
		}
		switch {
		case page < w.want: // the previous request's sentinel
		case page == w.want:
			rows.WriteString(line)
		case page == w.want+1 && level == 1:
			w.want += 2
			return rows.Bytes(), nil
		default:
			return nil, w.fail(ctx, fmt.Errorf("page %d while waiting for page %d", page, w.want))
		}
	}
}

// rowPage reads the level and page number that start every TSV row.
func rowPage(line string) (level, page int, ok bool) {
	f := strings.SplitN(line, "\t", 3)
	if len(f) < 3 {
		return 0, 0, false
	}
	l, err1 := strconv.Atoi(f[0])
	p, err2 := strconv.Atoi(f[1])
	return l, p, err1 == nil && err2 == nil
}

func (w *worker) fail(ctx context.Context, err error) error {
	w.kill()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if msg := lastLine(w.stderr); msg != "" {
		return fmt.Errorf("tesseract stopped: %w: %s", err, msg)
	}
	return fmt.Errorf("tesseract stopped: %w", err)
}

func (w *worker) kill() {
	w.dead.Store(true)
	w.stdin.Close()
	if w.cmd.Process != nil {
		w.cmd.Process.Kill()
	}
}

// close stops the process and reaps it.
func (w *worker) close() {
	w.kill()
	w.cmd.Wait()
}

// pool keeps idle workers per language set and PSM, and holds one slot
// per running worker so no more than Resident processes ever read at once:
// on a small machine extra processes only slow each other down.
type pool struct {
	mu     sync.Mutex
	idle   map[string][]*worker
	slots  chan struct{}
	closed bool
}

func (t *Tesseract) getWorker(ctx context.Context, key string, args []string) (*worker, error) {
	select {
	case t.pool.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t.pool.mu.Lock()
	if t.pool.closed {
		t.pool.mu.Unlock()
		<-t.pool.slots
		return nil, errors.New("ocr: tesseract engine is closed")
	}
	if ws := t.pool.idle[key]; len(ws) > 0 {
		w := ws[len(ws)-1]
		t.pool.idle[key] = ws[:len(ws)-1]
		t.pool.mu.Unlock()
		w.idle.Stop()
		return w, nil
	}
	// Another language set's idle process would only hold memory now.
	var stale *worker
	for k, ws := range t.pool.idle {
		if len(ws) > 0 && t.idleCount() >= t.resident {
			stale = ws[0]
			t.pool.idle[k] = ws[1:]
			break
		}
	}
	t.pool.mu.Unlock()
	if stale != nil {
		stale.idle.Stop()
		go stale.close()
	}
	w, err := t.startWorker(key, args)
	if err != nil {
		<-t.pool.slots
	}
	return w, err
}

func (t *Tesseract) idleCount() int {
	n := 0
	for _, ws := range t.pool.idle {
		n += len(ws)
	}
	return n
}

// putWorker keeps a healthy worker for the next call, stops it after the
// idle timeout, and frees its slot.
func (t *Tesseract) putWorker(w *worker) {
	defer func() { <-t.pool.slots }()
	t.pool.mu.Lock()
	if w.dead.Load() || t.pool.closed {
		t.pool.mu.Unlock()
		go w.close()
		return
	}
	if t.pool.idle == nil {
		t.pool.idle = make(map[string][]*worker)
	}
	t.pool.idle[w.key] = append(t.pool.idle[w.key], w)
	w.idle = time.AfterFunc(t.idleTimeout, func() { t.retire(w) })
	t.pool.mu.Unlock()
}

func (t *Tesseract) retire(w *worker) {
	t.pool.mu.Lock()
	ws := t.pool.idle[w.key]
	for i, x := range ws {
		if x == w {
			t.pool.idle[w.key] = append(ws[:i:i], ws[i+1:]...)
			t.pool.mu.Unlock()
			w.close()
			return
		}
	}
	t.pool.mu.Unlock()
}

// Close stops every resident tesseract process and removes the engine's
// temporary files. Calls after Close fail.
func (t *Tesseract) Close() error {
	t.pool.mu.Lock()
	t.pool.closed = true
	var all []*worker
	for _, ws := range t.pool.idle {
		all = append(all, ws...)
	}
	t.pool.idle = nil
	t.pool.mu.Unlock()
	for _, w := range all {
		w.idle.Stop()
		w.close()
	}
	if t.dir != "" {
		return os.RemoveAll(t.dir)
	}
	return nil
}

// lastLine is the last line of what a process said that is not a page
// announcement.
func lastLine(t *tail.Buffer) string {
	lines := strings.Split(t.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "Page ") {
			return l
		}
	}
	return ""
}
