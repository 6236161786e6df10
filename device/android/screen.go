package android

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/png"
	"sync"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device"
)

// Screenshot returns the screen as PNG, by the driver's ScreenshotMode.
func (d *Driver) Screenshot(ctx context.Context) ([]byte, error) {
	if d.opts.Screenshot == ScreenshotRaw {
		return d.ScreenshotRaw(ctx)
	}
	return d.ScreenshotPNG(ctx)
}

var pngTrailer = []byte("IEND\xae\x42\x60\x82")

// ScreenshotPNG asks the device for a PNG (`exec:screencap -p`).
func (d *Driver) ScreenshotPNG(ctx context.Context) ([]byte, error) {
	var out []byte
	err := d.call(ctx, "screenshot", true, d.opts.Timeout, func(ctx context.Context) error {
		b, err := adb.Exec(ctx, d.t, "screencap -p")
		if err != nil {
			return err
		}
		if len(b) == 0 {
			// Through the adb server, a device whose adbd died while
			// screencap ran answers with an empty stream: it is gone, not
			// a phone that writes no PNG.
			return fmt.Errorf("%w: screencap -p wrote nothing (%w)", adb.ErrGone, errRetry)
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			return fmt.Errorf("screencap -p did not write a PNG: %q", head(b))
		}
		if !bytes.HasSuffix(b, pngTrailer) {
			// Through the adb server a dropped device looks like a short read.
			return fmt.Errorf("%w: PNG cut short after %d bytes (%w)", adb.ErrGone, len(b), errRetry)
		}
		out = b
		return nil
	})
	return out, err
}

// ScreenshotRaw pulls the raw framebuffer (`exec:screencap`) and encodes
// it as PNG on the host.
func (d *Driver) ScreenshotRaw(ctx context.Context) ([]byte, error) {
	var img *image.RGBA
	err := d.call(ctx, "screenshot", true, d.opts.Timeout, func(ctx context.Context) error {
		b, err := adb.Exec(ctx, d.t, "screencap")
		if err != nil {
			return err
		}
		img, err = decodeRaw(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	return encodePNG(img)
}

var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &pngPool{}}

type pngPool struct{ p sync.Pool }

func (p *pngPool) Get() *png.EncoderBuffer {
	b, _ := p.p.Get().(*png.EncoderBuffer)
	return b
}
func (p *pngPool) Put(b *png.EncoderBuffer) { p.p.Put(b) }

func encodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding screenshot: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeRaw reads screencap's raw form: width, height, pixel format (1 =
// RGBA_8888, 2 = RGBX_8888) as little-endian u32s, a fourth u32 (the
// colour space) on Android 9 and later, then the pixels.
func decodeRaw(b []byte) (*image.RGBA, error) {
	if len(b) < 12 {
		return nil, fmt.Errorf("%w: raw screencap of %d bytes has no header (%w)", adb.ErrGone, len(b), errRetry)
	}
	w := int(binary.LittleEndian.Uint32(b[0:]))
	h := int(binary.LittleEndian.Uint32(b[4:]))
	format := binary.LittleEndian.Uint32(b[8:])
	if w <= 0 || h <= 0 || w > 1<<14 || h > 1<<14 {
		return nil, fmt.Errorf("raw screencap reports a %dx%d screen", w, h)
	}
	if format != 1 && format != 2 {
		return nil, fmt.Errorf("raw screencap pixel format %d is not RGBA_8888 or RGBX_8888: %w", format, device.ErrUnsupported)
	}
	n := w * h * 4
	var pix []byte
	switch len(b) {
	case 12 + n:
		pix = b[12:]
	case 16 + n:
		pix = b[16:]
	default:
		return nil, fmt.Errorf("%w: raw screencap has %d bytes, want %d for %dx%d (%w)", adb.ErrGone, len(b), 16+n, w, h, errRetry)
	}
	img := &image.RGBA{Pix: pix, Stride: w * 4, Rect: image.Rect(0, 0, w, h)}
	if format == 2 {
		for i := 3; i < len(pix); i += 4 {
			pix[i] = 0xff
		}
	}
	return img, nil
}

func head(b []byte) []byte { return b[:min(len(b), 80)] }

// sourceTries bounds the retries of uiautomator's "could not get idle
// state", which it prints while an animation runs.
const sourceTries = 3

var errNotIdle = errors.New("uiautomator could not get idle state")

// Source dumps the UI hierarchy with `uiautomator dump /dev/tty`, taking
// the XML from `<?xml` to `</hierarchy>`.
func (d *Driver) Source(ctx context.Context) (device.Source, error) {
	var src device.Source
	err := d.call(ctx, "source", true, 2*d.opts.Timeout, func(ctx context.Context) error {
		var err error
		for try := 1; try <= sourceTries; try++ {
			var b []byte
			b, err = adb.Exec(ctx, d.t, "uiautomator dump /dev/tty")
			if err != nil {
				return err
			}
			var xml []byte
			xml, err = extractHierarchy(b)
			if err == nil {
				src = device.Source{Format: device.FormatUIAutomator, Data: xml}
				return nil
			}
			if !errors.Is(err, errNotIdle) {
				return err
			}
			d.log.Debug("uiautomator not idle, retrying", "serial", d.serial, "try", try)
		}
		return fmt.Errorf("%w after %d tries: the screen keeps animating; retry when it settles", err, sourceTries)
	})
	return src, err
}

func extractHierarchy(b []byte) ([]byte, error) {
	if bytes.Contains(b, []byte("could not get idle state")) {
		return nil, errNotIdle
	}
	start := bytes.Index(b, []byte("<?xml"))
	if start < 0 {
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: uiautomator wrote nothing (%w)", adb.ErrGone, errRetry)
		}
		return nil, fmt.Errorf("uiautomator dump wrote no XML: %q", head(b))
	}
	end := bytes.LastIndex(b, []byte("</hierarchy>"))
	if end < start {
		return nil, fmt.Errorf("%w: uiautomator XML cut short after %d bytes (%w)", adb.ErrGone, len(b)-start, errRetry)
	}
	return b[start : end+len("</hierarchy>")], nil
}
