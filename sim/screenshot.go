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

// renderSlots bounds the screenshots drawn and encoded at once to the
// cores (each draws and compresses its bands on all of them): 50 phones
// polled together then hold a few encoders' buffers, not 50, and each
// screenshot gets the cores sooner.
var renderSlots = sync.OnceValue(func() chan struct{} {
	return make(chan struct{}, runtime.GOMAXPROCS(0))
})

// Screenshot returns the screen as PNG bytes, cached until the screen
// changes; when it changed, only the bands where something else is painted
// (see paintKeys), and that no phone of the process painted alike lately,
// are drawn again, and of those only the ones whose pixels changed are
// compressed again. The caller must not modify the returned slice.
func (p *Phone) Screenshot() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	L := p.layout()
	paint := p.paintKeys(L)
	key := sumKeys(paint)
	if p.shot.png != nil && p.shot.key == key {
		burstTrim.note(len(p.shot.png))
		return p.shot.png, nil
	}
	slots := renderSlots()
	slots <- struct{}{}
	defer func() { <-slots }()
	// Each band is drawn into a buffer of its own rows: no frame.
	draw := func(buf *image.RGBA, _ int) *image.RGBA {
		p.draw(buf, L)
		return buf
	}
	png, bands, _, err := encodeBands(image.Rect(0, 0, p.w, p.h), draw, p.shot.bands, paint)
	if err != nil {
		return nil, fmt.Errorf("sim: screenshot: encode png: %w", err)
	}
	p.shot = shotCache{key: key, png: png, bands: bands}
	burstTrim.note(len(png))
	return png, nil
}

// Frame returns the current screen as pixels; the caller owns the image.
func (p *Phone) Frame() (*image.RGBA, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	p.draw(f, p.layout())
	burstTrim.note(len(f.Pix))
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
