package sim

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"image"
	"runtime"
	"sync"
)

// shotCache keeps the last screenshot's PNG until what is drawn changes,
// and its bands for the next screenshot to reuse where the pixels did not
// change.
type shotCache struct {
	key   uint64
	png   []byte
	bands []band
}

// framePool recycles frame buffers between phones of one size: a
// 1080×2400 frame is 10 MB, too much to keep per phone.
var framePool sync.Map // image.Point -> *sync.Pool

// renderSlots bounds the screenshots drawn and encoded at once to the
// cores (each compresses its bands on all of them): 50 phones polled
// together then hold a few frames, not 50 (500 MB kept after the burst),
// and each screenshot gets the cores sooner.
var renderSlots = sync.OnceValue(func() chan struct{} {
	return make(chan struct{}, runtime.GOMAXPROCS(0))
})

func getFrame(w, h int) *image.RGBA {
	pl, _ := framePool.LoadOrStore(image.Pt(w, h), &sync.Pool{New: func() any {
		return image.NewRGBA(image.Rect(0, 0, w, h))
	}})
	return pl.(*sync.Pool).Get().(*image.RGBA)
}

func putFrame(f *image.RGBA) {
	if pl, ok := framePool.Load(f.Rect.Size()); ok {
		pl.(*sync.Pool).Put(f)
	}
}

// Screenshot returns the screen as PNG bytes, cached until the screen
// changes; when it changed, only the bands whose pixels changed are
// compressed again. The caller must not modify the returned slice.
func (p *Phone) Screenshot() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	L := p.layout()
	key := p.layoutKey(L)
	if p.shot.png != nil && p.shot.key == key {
		return p.shot.png, nil
	}
	slots := renderSlots()
	slots <- struct{}{}
	defer func() { <-slots }()
	f := getFrame(p.w, p.h)
	defer putFrame(f)
	p.draw(f, L)
	png, bands, _, err := encodeBands(f, p.shot.bands)
	if err != nil {
		return nil, fmt.Errorf("sim: screenshot: encode png: %w", err)
	}
	p.shot = shotCache{key: key, png: png, bands: bands}
	return png, nil
}

// Frame returns the current screen as pixels; the caller owns the image.
func (p *Phone) Frame() (*image.RGBA, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	p.draw(f, p.layout())
	return f, nil
}

// layoutKey hashes everything the renderer draws, so the cache can never
// serve a stale picture whatever changed it (state, time, the clock).
func (p *Phone) layoutKey(L *screenLayout) uint64 {
	h := fnv.New64a()
	var num [8]byte
	n := func(v int) {
		binary.LittleEndian.PutUint64(num[:], uint64(v))
		h.Write(num[:])
	}
	b := func(on bool) {
		if on {
			n(1)
		} else {
			n(0)
		}
	}
	b(L.off)
	b(L.dark)
	b(p.inOverview)
	b(p.locked)
	h.Write([]byte(p.fg))
	if L.keyboard != nil {
		n(L.keyboard.r.Min.Y)
	}
	var walk func(v *view)
	walk = func(v *view) {
		if v == nil {
			return
		}
		h.Write([]byte(v.kind))
		h.Write([]byte(v.style))
		h.Write([]byte(v.text))
		for _, l := range v.lines {
			h.Write([]byte(l))
		}
		n(v.r.Min.X)
		n(v.r.Min.Y)
		n(v.r.Max.X)
		n(v.r.Max.Y)
		b(v.checked)
		b(v.focused)
		b(v.selected)
		b(v.disabled)
		b(v.hint)
		n(int(v.fg.R)<<16 | int(v.fg.G)<<8 | int(v.fg.B))
		n(int(v.bg.R)<<16 | int(v.bg.G)<<8 | int(v.bg.B))
		n(len(v.children))
		for _, c := range v.children {
			walk(c)
		}
	}
	for _, v := range []*view{L.app, L.dialog, L.toast, L.status, L.nav} {
		walk(v)
	}
	return h.Sum64()
}
