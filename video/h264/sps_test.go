package h264_test

import (
	"os"
	"testing"

	"github.com/apexagent/apex/video/h264"
)

// The one-PROFILE-WxH.h264 files are one blue frame each:
//
//	ffmpeg -f lavfi -i color=c=blue:size=WxH:rate=30 -frames:v 1 -pix_fmt yuv420p \
//	  -c:v libx264 -preset ultrafast -profile:v PROFILE -f h264 testdata/one-PROFILE-WxH.h264
func TestConfigSize(t *testing.T) {
	for _, tc := range []struct {
		file string
		w, h int
	}{
		{"ten.h264", 64, 64},
		{"one-baseline-540x1200.h264", 540, 1200}, // cropped: 540 is not a multiple of 16
		{"one-baseline-1200x540.h264", 1200, 540}, // a rotated phone's
		{"one-high-350x198.h264", 350, 198},       // high profile: chroma format and depth come first
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var s h264.Splitter
			aus := append(s.Write(b), s.Flush()...)
			c := h264.Config{SPS: aus[0].Find(h264.TypeSPS)}
			w, h, err := c.Size()
			if err != nil || w != tc.w || h != tc.h {
				t.Errorf("Size() = %d, %d, %v; want %d, %d", w, h, err, tc.w, tc.h)
			}
		})
	}
	if _, _, err := (h264.Config{SPS: []byte{0x67, 0x42, 0xc0, 0x1f}}).Size(); err == nil {
		t.Error("an SPS cut after its level gave a size")
	}
}

// FuzzConfigSize: any bytes after an SPS header give a size or an error,
// never a panic.
func FuzzConfigSize(f *testing.F) {
	f.Add([]byte{0x42, 0xc0, 0x1f, 0xda, 0x02, 0x20, 0x27, 0xe5, 0x9a, 0x80})
	f.Add([]byte{0x64, 0x00, 0x1f, 0xac, 0xd9, 0x41, 0x61, 0xfa, 0x10, 0x00, 0x00, 0x03})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = h264.Config{SPS: append([]byte{0x67}, b...)}.Size()
	})
}
