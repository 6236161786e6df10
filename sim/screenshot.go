package sim

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"image"
	"runtime"
	"sync"
)

// shotCache keeps the last screenshot's PNG until what is drawn changes,
// and its bands for the next screenshot to reuse where what is painted, or
// the pixels, did not change.
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
// changes; when it changed, only the bands where something else is painted
// (see paintKeys) are drawn again, and of those only the ones whose pixels
// changed are compressed again. The caller must not modify the returned
// slice.
func (p *Phone) Screenshot() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	L := p.layout()
	paint := p.paintKeys(L)
	key := sumKeys(paint)
	if p.shot.png != nil && p.shot.key == key {
		return p.shot.png, nil
	}
	prev := p.shot.bands
	keep := make([]bool, len(paint))
	if len(prev) == len(paint) {
		for i := range paint {
			keep[i] = prev[i].paint == paint[i]
		}
	}
	slots := renderSlots()
	slots <- struct{}{}
	defer func() { <-slots }()
	f := getFrame(p.w, p.h)
	defer putFrame(f)
	for i := 0; i < len(keep); {
		if keep[i] {
			i++
			continue
		}
		j := i
		for j < len(keep) && !keep[j] {
			j++
		}
		// Bands i to j-1, and the row above them, which their first row is
		// filtered against.
		p.drawRows(f, image.Rect(0, max(i*bandRows-1, 0), p.w, min(j*bandRows, p.h)), L)
		i = j
	}
	png, bands, _, err := encodeBands(f, prev, keep)
	if err != nil {
		return nil, fmt.Errorf("sim: screenshot: encode png: %w", err)
	}
	for i := range bands {
		bands[i].paint = paint[i]
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

// sumKeys is one key for the whole screen.
func sumKeys(keys []uint64) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	var b [8]byte
	for _, k := range keys {
		binary.LittleEndian.PutUint64(b[:], k)
		h.Write(b[:])
	}
	return h.Sum64()
}
