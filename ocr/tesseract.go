package ocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ErrNotInstalled is returned when the tesseract program or a language's
// data is missing; its message says which Debian packages to install.
var ErrNotInstalled = errors.New("ocr: tesseract is not installed")

// TesseractOptions configure a Tesseract engine. The zero value is usable.
type TesseractOptions struct {
	// Path is the tesseract program; "" looks "tesseract" up on PATH.
	Path string
	// Languages read when a call does not say; nil means English plus
	// Simplified Chinese when its data is installed.
	Languages []string
	// DataDir overrides where language data lives (--tessdata-dir).
	DataDir string
	// Threads caps Tesseract's OpenMP threads per process; 0 means 1,
	// which is fastest on small machines (OpenMP threads fight each other
	// and every other process); negative leaves Tesseract's default.
	Threads int
	// Resident is how many tesseract processes may run at once; they stay
	// loaded between calls, and further calls wait for one. 0 means 2.
	// Negative starts one process per call, feeding the image on stdin:
	// slower, but nothing stays running.
	Resident int
	// IdleTimeout stops a resident process nobody used for this long;
	// 0 means two minutes.
	IdleTimeout time.Duration
	Log         *slog.Logger
}

// Tesseract runs Debian's tesseract program and reads its TSV output. It
// keeps resident processes between calls (see TesseractOptions.Resident);
// Close stops them. It is safe for concurrent use.
type Tesseract struct {
	path        string
	dataDir     string
	threads     int
	resident    int
	idleTimeout time.Duration
	installed   []string
	langs       []string
	log         *slog.Logger
	runs        atomic.Int64

	dir      string // temporary files handed to resident processes
	sentinel string // blank image that ends every request
	pool     pool
}

var _ Engine = (*Tesseract)(nil)

// NewTesseract finds the tesseract program and its installed languages.
func NewTesseract(ctx context.Context, opts *TesseractOptions) (*Tesseract, error) {
	if opts == nil {
		opts = &TesseractOptions{}
	}
	t := &Tesseract{dataDir: opts.DataDir, threads: opts.Threads, log: opts.Log,
		resident: opts.Resident, idleTimeout: opts.IdleTimeout}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if t.threads == 0 {
		t.threads = 1
	}
	if t.resident == 0 {
		t.resident = 2
	}
	if t.idleTimeout <= 0 {
		t.idleTimeout = 2 * time.Minute
	}
	name := opts.Path
	if name == "" {
		name = "tesseract"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w (%v): install tesseract-ocr: apt-get install tesseract-ocr tesseract-ocr-eng", ErrNotInstalled, err)
	}
	t.path = path
	if t.installed, err = t.listLangs(ctx); err != nil {
		return nil, err
	}
	t.langs = opts.Languages
	if len(t.langs) == 0 {
		t.langs = []string{"eng"}
		if slices.Contains(t.installed, "chi_sim") {
			t.langs = append(t.langs, "chi_sim")
		}
	}
	if err := t.checkLangs(t.langs); err != nil {
		return nil, err
	}
	if t.resident > 0 {
		t.pool.slots = make(chan struct{}, t.resident)
		if t.dir, err = os.MkdirTemp("", "apex-ocr-"); err != nil {
			return nil, fmt.Errorf("ocr: temporary directory for tesseract: %w", err)
		}
		t.sentinel = filepath.Join(t.dir, "sentinel.png")
		if err := os.WriteFile(t.sentinel, blankPNG(), 0o600); err != nil {
			os.RemoveAll(t.dir)
			return nil, fmt.Errorf("ocr: write sentinel image: %w", err)
		}
	}
	return t, nil
}

// Languages returns the languages read by default.
func (t *Tesseract) Languages() []string { return slices.Clone(t.langs) }

// Installed returns every language whose data tesseract found.
func (t *Tesseract) Installed() []string { return slices.Clone(t.installed) }

// Runs counts the images tesseract has been asked to read; tests use it to
// prove cache hits.
func (t *Tesseract) Runs() int64 { return t.runs.Load() }

func (t *Tesseract) listLangs(ctx context.Context) ([]string, error) {
	args := []string{"--list-langs"}
	if t.dataDir != "" {
		args = append([]string{"--tessdata-dir", t.dataDir}, args...)
	}
	out, err := t.command(ctx, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("ocr: tesseract --list-langs: %w", err)
	}
	var langs []string
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "List of") || l == "osd" {
			continue
		}
		langs = append(langs, l)
	}
	return langs, nil
}

func (t *Tesseract) checkLangs(langs []string) error {
	for _, l := range langs {
		if !slices.Contains(t.installed, l) {
			return fmt.Errorf("%w: language %q has no data (installed: %s): apt-get install tesseract-ocr-%s",
				ErrNotInstalled, l, strings.Join(t.installed, ", "), strings.ReplaceAll(strings.ToLower(l), "_", "-"))
		}
	}
	return nil
}

// Recognize implements Engine.
func (t *Tesseract) Recognize(ctx context.Context, img []byte, opts *Options) (*Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	langs := opts.Languages
	if len(langs) == 0 {
		langs = t.langs
	} else if err := t.checkLangs(langs); err != nil {
		return nil, err
	}
	in, err := prepare(img, opts.Region, opts.Scale)
	if err != nil {
		return nil, err
	}
	psm := opts.PSM
	if psm == 0 {
		psm = 11 // sparse text: screens are scattered labels, not pages
	}
	start := time.Now()
	t.runs.Add(1)
	out, err := t.run(ctx, in.data, strings.Join(langs, "+"), psm)
	if err != nil {
		return nil, fmt.Errorf("ocr: tesseract on %v of %dx%d image (%s): %w",
			in.region, in.full.Dx(), in.full.Dy(), strings.Join(langs, "+"), err)
	}
	lines, err := parseTSV(out)
	if err != nil {
		return nil, err
	}
	lines = in.mapLines(lines)
	res := &Result{Width: in.full.Dx(), Height: in.full.Dy(), Region: in.region, Lines: lines,
		Languages: slices.Clone(langs)}
	for _, l := range lines {
		res.Words = append(res.Words, l.Words...)
	}
	t.log.DebugContext(ctx, "ocr: tesseract", "region", in.region, "scale", in.scale, "langs", langs,
		"words", len(res.Words), "took", time.Since(start))
	return res, nil
}

// run reads one image with a resident process, or a fresh one when
// resident processes are off.
func (t *Tesseract) run(ctx context.Context, img []byte, langs string, psm int) ([]byte, error) {
	args := []string{"-l", langs, "--psm", strconv.Itoa(psm)}
	if t.dataDir != "" {
		args = append(args, "--tessdata-dir", t.dataDir)
	}
	if t.resident < 0 {
		return t.command(ctx, img, append(append([]string{"stdin", "stdout"}, args...), "tsv")...)
	}
	args = append(append([]string{"-", "stdout"}, args...), "-c", "stream_filelist=true", "tsv")
	w, err := t.getWorker(ctx, langs+"|"+strconv.Itoa(psm), args)
	if err != nil {
		return nil, err
	}
	defer t.putWorker(w)
	return w.recognize(ctx, t.dir, t.sentinel, img)
}

func (t *Tesseract) env() []string {
	env := os.Environ()
	if t.threads > 0 {
		env = append(env, "OMP_THREAD_LIMIT="+strconv.Itoa(t.threads))
	}
	return env
}

// command runs tesseract once with stdin, returning stdout; a failure
// carries the last line tesseract wrote to stderr.
func (t *Tesseract) command(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, t.path, args...)
	cmd.Env = t.env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, fmt.Errorf("%v: %s", err, msg)
	}
	return stdout.Bytes(), nil
}

// blankPNG is the sentinel: an 8x8 white image.
func blankPNG() []byte {
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}
