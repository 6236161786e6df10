package sim

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"io"
	"sync"
)

// encodeFlat writes an opaque RGBA frame as an RGB PNG tuned for flat user
// interfaces, several times faster than image/png for a file about as
// small:
//   - every row uses the Up filter instead of image/png's per-row choice
//     of five (half its time on a phone screen);
//   - a row equal to the one above (half to three quarters of a screen)
//     is not filtered, and its Adler-32 share has a closed form;
//   - deflate runs at BestSpeed, the top and bottom halves in parallel as
//     two runs of blocks (the second starts without history, which costs
//     a few hundred bytes), their checksums combined.
//
// Alpha is dropped: frames are opaque. Tried and dropped: long runs of
// equal rows as hand-made fixed-Huffman blocks (~10 % less CPU, ~15 %
// larger files: the compressor loses its history at every run); a palette
// (screens have 700–2000 colours from anti-aliased text).
func encodeFlat(w io.Writer, img *image.RGBA) error {
	b := img.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 {
		return fmt.Errorf("png: empty image %v", b)
	}
	top := flatPool.Get().(*flatState)
	defer flatPool.Put(top)
	bottom := flatPool.Get().(*flatState)
	defer flatPool.Put(bottom)
	mid := b.Min.Y + b.Dy()/2
	var topErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		topErr = top.compress(img, b.Min.Y, mid, false)
	}()
	err := bottom.compress(img, mid, b.Max.Y, true)
	<-done
	if err == nil {
		err = topErr
	}
	if err != nil {
		return err
	}
	n := uint64(b.Max.Y-mid) * uint64(1+3*b.Dx())
	sum := top.adler.then(bottom.adler, n).sum()

	var hdr [13]byte
	binary.BigEndian.PutUint32(hdr[0:], uint32(b.Dx()))
	binary.BigEndian.PutUint32(hdr[4:], uint32(b.Dy()))
	hdr[8], hdr[9] = 8, 2 // 8 bits per sample, truecolour
	var trailer [4]byte
	binary.BigEndian.PutUint32(trailer[:], sum)
	cw := &chunkWriter{w: w}
	cw.raw([]byte("\x89PNG\r\n\x1a\n"))
	cw.chunk("IHDR", hdr[:])
	// zlib: deflate with a 32K window at the fastest level, the two runs
	// of blocks, the Adler-32 of all.
	cw.chunk("IDAT", []byte{0x78, 0x01}, top.idat.Bytes(), bottom.idat.Bytes(), trailer[:])
	cw.chunk("IEND")
	return cw.err
}

// compress deflates the filtered rows y0 to y1 into st.idat and sums them
// into st.adler. The last part ends the stream; the others end on a sync
// flush, so the next part's blocks follow on a byte boundary.
func (st *flatState) compress(img *image.RGBA, y0, y1 int, last bool) error {
	b := img.Bounds()
	width := b.Dx()
	st.idat.Reset()
	st.fw.Reset(&st.idat)
	st.adler = adler{s1: 1}
	rowLen := 1 + 3*width
	st.grow(rowLen)
	prev, out, zero := st.prev[:rowLen], st.out[:rowLen], st.zero[:rowLen]
	clear(prev)
	out[0] = 2 // the Up filter
	row := func(y int) []byte {
		off := img.PixOffset(b.Min.X, y)
		return img.Pix[off : off+4*width]
	}
	var lastSrc []byte
	if y0 > b.Min.Y {
		// Filter against the row above the part, as the decoder will.
		lastSrc = row(y0 - 1)
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
			st.adler.zeroRow(rowLen)
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
		st.adler.update(out)
		lastSrc = src
	}
	if last {
		return st.fw.Close()
	}
	return st.fw.Flush()
}

type flatState struct {
	idat            bytes.Buffer
	fw              *flate.Writer
	adler           adler
	prev, out, zero []byte
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

type chunkWriter struct {
	w   io.Writer
	err error
}

func (c *chunkWriter) raw(p []byte) {
	if c.err == nil {
		_, c.err = c.w.Write(p)
	}
}

func (c *chunkWriter) chunk(name string, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(n))
	copy(hdr[4:], name)
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:])
	c.raw(hdr[:])
	for _, p := range parts {
		crc.Write(p)
		c.raw(p)
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	c.raw(sum[:])
}
