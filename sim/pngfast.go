package sim

import (
	"bytes"
	"compress/flate"
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"image"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// bandRows is the height of a band, the unit a frame is compressed in and
// reused in: a band whose pixels (and the row above, which its first row is
// filtered against) did not change since the phone's last screenshot keeps
// its compressed bytes. 64 rows cost ~1 % of size against one stream (each
// band starts without history) and let a typed character recompress a
// tenth of the screen.
const bandRows = 64

// band is one compressed band of a PNG, kept for the next frame.
type band struct {
	key   uint64 // hash of the band's rows, the row above and its place
	paint uint64 // what the renderer painted there (see paintKeys), or 0
	chunk []byte // its whole IDAT chunk, within the PNG that holds it
	adler adler  // Adler-32 of its filtered bytes, from the initial state
	n     uint64 // how many filtered bytes
}

// encodeFlat writes an opaque RGBA frame as an RGB PNG tuned for flat user
// interfaces (see encodeBands).
func encodeFlat(w io.Writer, img *image.RGBA) error {
	png, _, _, err := encodeFrame(img, nil)
	if err != nil {
		return err
	}
	_, err = w.Write(png)
	return err
}

// encodeFrame encodes a frame already drawn (see encodeBands), reusing
// prev's bands where its pixels did not change.
func encodeFrame(img *image.RGBA, prev []band) ([]byte, []band, int, error) {
	return encodeBands(img.Rect, func(*image.RGBA, int) *image.RGBA { return img }, prev, nil)
}

// drawBand gives the encoder band i of a frame: an image that holds the
// band's rows and the row above it (which its first row is filtered
// against) at their place in the frame. It is either a whole frame drawn
// before, or buf, a buffer placed at exactly those rows, drawn now. It is
// called for several bands at once.
type drawBand func(buf *image.RGBA, i int) *image.RGBA

// encodeBands encodes an opaque frame of bounds r as an RGB PNG, several
// times faster than image/png for a file about as small, reusing prev (the
// bands of the previous frame of the same size) where the pixels did not
// change. paint, when given, has each band's paint key (see paintKeys):
// a band whose key is prev's is prev's and is not drawn, nor is one whose
// key any phone's recent band had (sharedBands); the others are drawn by
// draw. It returns the PNG, its bands (slices of the PNG) and how many
// bands it compressed.
//   - every row uses the Up filter instead of image/png's per-row choice
//     of five (half its time on a phone screen);
//   - a row equal to the one above (half to three quarters of a screen)
//     is not filtered, and its Adler-32 share has a closed form;
//   - deflate runs at BestSpeed on bands of bandRows rows, each its own
//     IDAT chunk ending on a sync flush, drawn, hashed and compressed in
//     parallel and reused when what is painted there, or the pixels, are
//     prev's or any phone's recent band's (sharedBands); the checksums are
//     combined.
//
// No frame is needed: a band drawn into a buffer of its own rows is hashed
// and compressed there (a 1080×2400 frame is 10 MB; 50 phones shooting
// together held several, and a pool of them kept the heap big for a GC
// cycle after a burst).
//
// Alpha is dropped: frames are opaque. Tried and dropped: long runs of
// equal rows as hand-made fixed-Huffman blocks (~10 % less CPU, ~15 %
// larger files: the compressor loses its history at every run); a palette
// (screens have 700–2000 colours from anti-aliased text).
func encodeBands(r image.Rectangle, draw drawBand, prev []band, paint []uint64) ([]byte, []band, int, error) {
	if r.Dx() <= 0 || r.Dy() <= 0 {
		return nil, nil, 0, fmt.Errorf("png: empty image %v", r)
	}
	nb := (r.Dy() + bandRows - 1) / bandRows
	if len(prev) != nb {
		prev = nil
	}
	if len(paint) != nb {
		paint = nil
	}
	bands := make([]band, nb)
	var todo []int
	for i := range bands {
		if paint != nil && prev != nil && prev[i].paint == paint[i] {
			bands[i] = prev[i]
			continue
		}
		todo = append(todo, i)
	}
	compressed, err := encodeTodo(r, draw, prev, paint, bands, todo)
	if err != nil {
		return nil, nil, 0, err
	}
	if paint != nil {
		for i := range bands {
			bands[i].paint = paint[i]
		}
	}

	var hdr [13]byte
	binary.BigEndian.PutUint32(hdr[0:], uint32(r.Dx()))
	binary.BigEndian.PutUint32(hdr[4:], uint32(r.Dy()))
	hdr[8], hdr[9] = 8, 2 // 8 bits per sample, truecolour
	size := 8 + 12 + len(hdr) + 12 + 2 + 12 + 6 + 12
	sum := adler{s1: 1}
	for _, bd := range bands {
		size += len(bd.chunk)
		sum = sum.then(bd.adler, bd.n)
	}
	// The zlib stream: its header (a 32K window, the fastest level), the
	// bands' blocks, an empty final block, the Adler-32 of all.
	var trailer [6]byte
	trailer[0] = 0x03 // final, fixed Huffman, end of block
	binary.BigEndian.PutUint32(trailer[2:], sum.sum())
	out := make([]byte, 0, size)
	out = append(out, "\x89PNG\r\n\x1a\n"...)
	out = appendChunk(out, "IHDR", hdr[:])
	out = appendChunk(out, "IDAT", []byte{0x78, 0x01})
	for i := range bands {
		start := len(out)
		out = append(out, bands[i].chunk...)
		bands[i].chunk = out[start:len(out):len(out)]
	}
	out = appendChunk(out, "IDAT", trailer[:])
	out = appendChunk(out, "IEND", nil)
	return out, bands, compressed, nil
}

// encodeTodo fills in each band listed in todo, on up to GOMAXPROCS
// goroutines: from sharedBands by its paint key; else it draws it, hashes
// its pixels and takes prev's band or a shared one with the same pixels, or
// compresses it. It returns how many it compressed.
func encodeTodo(r image.Rectangle, draw drawBand, prev []band, paint []uint64, bands []band, todo []int) (int, error) {
	if len(todo) == 0 {
		return 0, nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	var next, compressed atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			st := flatPool.Get().(*flatState)
			defer flatPool.Put(st)
			for {
				k := int(next.Add(1)) - 1
				if k >= len(todo) {
					return
				}
				i := todo[k]
				var painted uint64
				if paint != nil {
					painted = paintedKey(paint[i], i)
					if bd, ok := sharedBands.get(painted); ok {
						bands[i] = bd
						continue
					}
				}
				img := draw(st.band(r, i), i)
				key := bandKey(img, r, i)
				if prev != nil && prev[i].key == key {
					bands[i] = prev[i] // a slice of prev's PNG: not shared
					continue
				}
				if bd, ok := sharedBands.get(key); ok {
					bands[i] = bd
				} else {
					bands[i].key = key
					if err := st.compress(img, &bands[i], r, i); err != nil {
						errs[w] = err
						return
					}
					sharedBands.put(key, bands[i])
					compressed.Add(1)
				}
				if paint != nil {
					sharedBands.put(painted, bands[i])
				}
			}
		})
	}
	wg.Wait()
	return int(compressed.Load()), errors.Join(errs...)
}

// sharedBandBytes bounds the bands kept for every phone of the process.
const sharedBandBytes = 8 << 20

// sharedBands keeps the bands last compressed by any phone of the process,
// by the hash of their pixels and by what was painted there (paintedKey),
// up to sharedBandBytes (the least recently used go first): phones that
// show the same app, keyboard or bars (a farm running one suite) draw and
// compress each such band once.
var sharedBands bandCache

type bandCache struct {
	mu    sync.Mutex
	byKey map[uint64]*list.Element // of cached
	lru   list.List                // most recently used first
	size  int
}

type cached struct {
	key uint64
	bd  band // its chunk a slice of its own
}

// paintedKey is sharedBands' key for band i where what is painted has the
// paint key paint: the same in two frames, the same pixels (paintKeys
// counts every view, the frame's size and the phone's looks in).
func paintedKey(paint uint64, i int) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	var b [17]byte
	b[0] = 'p'
	binary.LittleEndian.PutUint64(b[1:], paint)
	binary.LittleEndian.PutUint64(b[9:], uint64(i))
	h.Write(b[:])
	return h.Sum64()
}

func (c *bandCache) get(key uint64) (band, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return band{}, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(cached).bd, true
}

func (c *bandCache) put(key uint64, bd band) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[uint64]*list.Element{}
	}
	if _, ok := c.byKey[key]; ok || len(bd.chunk) > sharedBandBytes/4 {
		return
	}
	c.byKey[key] = c.lru.PushFront(cached{key, bd})
	c.size += len(bd.chunk)
	for c.size > sharedBandBytes {
		old := c.lru.Remove(c.lru.Back()).(cached)
		delete(c.byKey, old.key)
		c.size -= len(old.bd.chunk)
	}
}

// clear drops every band.
func (c *bandCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.byKey)
	c.lru.Init()
	c.size = 0
}

// hashSeed keys band hashes; a process's bands are compared only with
// bands of the same process.
var hashSeed = maphash.MakeSeed()

// bandRange is band i's rows of a frame of bounds r: from y0 to y1, and
// top, the row above (y0 for the first band).
func bandRange(r image.Rectangle, i int) (top, y0, y1 int) {
	y0, y1 = r.Min.Y+i*bandRows, min(r.Min.Y+(i+1)*bandRows, r.Max.Y)
	return max(y0-1, r.Min.Y), y0, y1
}

// bandKey hashes band i's rows of a frame of bounds r, read from img, with
// the row above and the frame's width and height, which its bytes depend
// on.
func bandKey(img *image.RGBA, r image.Rectangle, i int) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	var num [24]byte
	binary.LittleEndian.PutUint64(num[0:], uint64(r.Dx()))
	binary.LittleEndian.PutUint64(num[8:], uint64(r.Dy()))
	binary.LittleEndian.PutUint64(num[16:], uint64(i))
	h.Write(num[:])
	top, _, y1 := bandRange(r, i)
	var above []byte
	for y := top; y < y1; y++ {
		off := img.PixOffset(r.Min.X, y)
		row := img.Pix[off : off+4*r.Dx()]
		// A row equal to the one above (most of a flat screen) is compared,
		// several times faster than hashing it, and hashed as a mark.
		if above != nil && bytes.Equal(row, above) {
			h.WriteByte(0)
			continue
		}
		h.WriteByte(1)
		h.Write(row)
		above = row
	}
	return h.Sum64()
}

// compress deflates band i's filtered rows of a frame of bounds r, read
// from img, into bd.chunk (a fresh IDAT chunk) and sums them into bd.adler.
// The band ends on a sync flush, so the next band's blocks follow on a byte
// boundary.
func (st *flatState) compress(img *image.RGBA, bd *band, r image.Rectangle, i int) error {
	top, y0, y1 := bandRange(r, i)
	width := r.Dx()
	st.idat.Reset()
	st.fw.Reset(&st.idat)
	bd.adler = adler{s1: 1}
	rowLen := 1 + 3*width
	bd.n = uint64(y1-y0) * uint64(rowLen)
	st.grow(rowLen)
	prev, out, zero := st.prev[:rowLen], st.out[:rowLen], st.zero[:rowLen]
	clear(prev)
	out[0] = 2 // the Up filter
	row := func(y int) []byte {
		off := img.PixOffset(r.Min.X, y)
		return img.Pix[off : off+4*width]
	}
	var lastSrc []byte
	if top < y0 {
		// Filter against the row above the band, as the decoder will.
		lastSrc = row(top)
		for x, i := 0, 1; x < 4*width; x, i = x+4, i+3 {
			prev[i], prev[i+1], prev[i+2] = lastSrc[x], lastSrc[x+1], lastSrc[x+2]
		}
	}
	for y := y0; y < y1; y++ {
		src := row(y)
		if lastSrc != nil && bytes.Equal(src, lastSrc) {
			if _, err := st.fw.Write(zero); err != nil {
				return err
			}
			bd.adler.zeroRow(rowLen)
			continue
		}
		for x, i := 0, 1; x < 4*width; x, i = x+4, i+3 {
			r, g, bl := src[x], src[x+1], src[x+2]
			out[i], out[i+1], out[i+2] = r-prev[i], g-prev[i+1], bl-prev[i+2]
			prev[i], prev[i+1], prev[i+2] = r, g, bl
		}
		if _, err := st.fw.Write(out); err != nil {
			return err
		}
		bd.adler.update(out)
		lastSrc = src
	}
	if err := st.fw.Flush(); err != nil {
		return err
	}
	bd.chunk = appendChunk(nil, "IDAT", st.idat.Bytes())
	return nil
}

type flatState struct {
	idat            bytes.Buffer
	fw              *flate.Writer
	prev, out, zero []byte
	pix             []byte // the band a phone draws (see band)
}

// band returns a buffer placed at band i's rows of a frame of bounds r
// and the row above, for drawBand to draw into.
func (s *flatState) band(r image.Rectangle, i int) *image.RGBA {
	top, _, y1 := bandRange(r, i)
	n := 4 * r.Dx() * (y1 - top)
	if cap(s.pix) < n {
		s.pix = make([]byte, 4*r.Dx()*(bandRows+1))
	}
	return &image.RGBA{Pix: s.pix[:n], Stride: 4 * r.Dx(), Rect: image.Rect(r.Min.X, top, r.Max.X, y1)}
}

// grow sizes the row buffers; zero is a filtered row equal to the one
// above: the Up filter byte, then zeros.
func (s *flatState) grow(n int) {
	if cap(s.prev) < n {
		s.prev, s.out, s.zero = make([]byte, n), make([]byte, n), make([]byte, n)
		s.zero[0] = 2
	}
}

var flatPool = sync.Pool{New: func() any {
	st := &flatState{}
	st.fw, _ = flate.NewWriter(io.Discard, flate.BestSpeed)
	return st
}}

// adler is a running Adler-32 (zlib's checksum).
type adler struct{ s1, s2 uint32 }

const adlerMod = 65521

func (a *adler) update(p []byte) {
	for len(p) > 0 {
		n := min(len(p), 5552) // the most bytes before s2 can overflow
		for _, c := range p[:n] {
			a.s1 += uint32(c)
			a.s2 += a.s1
		}
		a.s1 %= adlerMod
		a.s2 %= adlerMod
		p = p[n:]
	}
}

// zeroRow adds a row of [2, 0 × rowLen-1] in constant time.
func (a *adler) zeroRow(rowLen int) {
	a.s1 = (a.s1 + 2) % adlerMod
	a.s2 = uint32((uint64(a.s2) + uint64(a.s1)*uint64(rowLen)) % adlerMod)
}

func (a adler) sum() uint32 { return a.s2<<16 | a.s1 }

// then is the checksum of a's bytes followed by n bytes summed as next
// (from the initial state): next's s1 runs a.s1-1 higher at each of its n
// bytes.
func (a adler) then(next adler, n uint64) adler {
	s1 := (uint64(a.s1) + uint64(next.s1) + adlerMod - 1) % adlerMod
	s2 := (uint64(a.s2) + uint64(next.s2) + n%adlerMod*uint64((a.s1+adlerMod-1)%adlerMod)) % adlerMod
	return adler{s1: uint32(s1), s2: uint32(s2)}
}

// appendChunk appends a PNG chunk (length, name, data, CRC) to dst.
func appendChunk(dst []byte, name string, data []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)))
	start := len(dst)
	dst = append(dst, name...)
	dst = append(dst, data...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}
