package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/apexagent/apex/video/frame"
)

// inlineHeight is the height the page shows a screenshot at (.shot img in
// the template), in CSS pixels: an embedded image has no more.
const inlineHeight = 420

// inlineQuality is the embedded JPEGs' quality: phone screens are mostly
// flat colour and text, which stays legible at this size.
const inlineQuality = 70

// embedAll puts every step's screenshots inside the page as JPEG data
// URLs at display size, linking the PNG files for the full picture; a file
// that cannot be read stays referred to by its path. Decoding the PNGs is
// most of the work: it is spread over the CPUs, and a screen seen before
// (the same file content: a run often returns to one) is done once.
func embedAll(dir string, steps []*stepView) {
	var shots []*shot
	for _, v := range steps {
		for _, s := range []*shot{v.Before, v.After} {
			if s != nil {
				shots = append(shots, s)
			}
		}
	}
	var (
		mu   sync.Mutex
		done = map[[32]byte]*embedded{}
		next = make(chan *shot)
		wg   sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for s := range next {
				rel := string(s.Src)
				file, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
				if err != nil {
					continue
				}
				sum := sha256.Sum256(file)
				mu.Lock()
				e, ok := done[sum]
				if !ok {
					e = &embedded{ready: make(chan struct{})}
					done[sum] = e
				}
				mu.Unlock()
				if !ok {
					e.url, e.w, e.h, e.err = compactJPEG(file)
					close(e.ready)
				}
				<-e.ready
				if e.err != nil {
					continue
				}
				s.Full, s.Src = rel, e.url
				if s.Width == 0 {
					s.Width, s.Height = e.w, e.h
				}
			}
		})
	}
	for _, s := range shots {
		next <- s
	}
	close(next)
	wg.Wait()
}

// embedded is one screenshot made compact, shared by every shot of the
// same screen.
type embedded struct {
	ready chan struct{} // closed once made
	url   template.URL
	w, h  int
	err   error
}

// compactJPEG decodes a PNG screenshot and encodes it as a JPEG data URL
// at most inlineHeight pixels high, with the PNG's own size.
func compactJPEG(file []byte) (template.URL, int, int, error) {
	src, err := png.Decode(bytes.NewReader(file))
	if err != nil {
		return "", 0, 0, err
	}
	b := src.Bounds()
	img := src
	if b.Dy() > inlineHeight {
		img = frame.Scale(nil, frame.RGBA(src), max(1, b.Dx()*inlineHeight/b.Dy()), inlineHeight)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: inlineQuality}); err != nil {
		return "", 0, 0, err
	}
	return template.URL("data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())), b.Dx(), b.Dy(), nil
}
