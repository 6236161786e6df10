package sim

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"io"
	"sync"
)

// encodeFlat writes an opaque RGBA frame as an RGB PNG tuned for flat
// user interfaces: every row uses the Up filter instead of image/png's
// per-row choice of five (half its time on a phone screen), a row equal to
// the one above is written as zeros without arithmetic, and deflate runs
// at BestSpeed. Files come out about as small. Alpha is dropped: frames
// are opaque.
func encodeFlat(w io.Writer, img *image.RGBA) error {
	b := img.Bounds()
	width, height := b.Dx(), b.Dy()
	if width <= 0 || height <= 0 {
		return fmt.Errorf("png: empty image %v", b)
	}
	var hdr [13]byte
	binary.BigEndian.PutUint32(hdr[0:], uint32(width))
	binary.BigEndian.PutUint32(hdr[4:], uint32(height))
	hdr[8], hdr[9] = 8, 2 // 8 bits per sample, truecolour
	cw := &chunkWriter{w: w}
	cw.raw([]byte("\x89PNG\r\n\x1a\n"))
	cw.chunk("IHDR", hdr[:])

	st := flatPool.Get().(*flatState)
	defer flatPool.Put(st)
	st.idat.Reset()
	st.zw.Reset(&st.idat)
	rowLen := 1 + 3*width
	st.grow(rowLen)
	prev, out, zero := st.prev[:rowLen], st.out[:rowLen], st.zero[:rowLen]
	clear(prev)
	clear(zero)
	zero[0], out[0] = 2, 2 // the Up filter
	var lastSrc []byte
	for y := range height {
		off := img.PixOffset(b.Min.X, b.Min.Y+y)
		src := img.Pix[off : off+4*width]
		row := out
		if lastSrc != nil && bytes.Equal(src, lastSrc) {
			row = zero
		} else {
			for x, i := 0, 1; x < 4*width; x, i = x+4, i+3 {
				r, g, bl := src[x], src[x+1], src[x+2]
				out[i], out[i+1], out[i+2] = r-prev[i], g-prev[i+1], bl-prev[i+2]
				prev[i], prev[i+1], prev[i+2] = r, g, bl
			}
			lastSrc = src
		}
		if _, err := st.zw.Write(row); err != nil {
			return err
		}
	}
	if err := st.zw.Close(); err != nil {
		return err
	}
	cw.chunk("IDAT", st.idat.Bytes())
	cw.chunk("IEND", nil)
	return cw.err
}

type flatState struct {
	idat            bytes.Buffer
	zw              *zlib.Writer
	prev, out, zero []byte
}

func (s *flatState) grow(n int) {
	if cap(s.prev) < n {
		s.prev, s.out, s.zero = make([]byte, n), make([]byte, n), make([]byte, n)
	}
}

var flatPool = sync.Pool{New: func() any {
	st := &flatState{}
	st.zw, _ = zlib.NewWriterLevel(io.Discard, flate.BestSpeed)
	return st
}}

type chunkWriter struct {
	w   io.Writer
	err error
}

func (c *chunkWriter) raw(p []byte) {
	if c.err == nil {
		_, c.err = c.w.Write(p)
	}
}

func (c *chunkWriter) chunk(name string, data []byte) {
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(data)))
	copy(hdr[4:], name)
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:])
	crc.Write(data)
	c.raw(hdr[:])
	c.raw(data)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	c.raw(sum[:])
}
