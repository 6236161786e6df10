package h264_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/apexagent/apex/video/h264"
	"github.com/google/go-cmp/cmp"
)

// ten.h264 is ffmpeg/libx264's baseline stream of ten 64×64 frames, two
// slices each, an IDR every fifth frame:
//
//	ffmpeg -f lavfi -i testsrc=size=64x64:rate=30 -frames:v 10 -pix_fmt yuv420p \
//	  -c:v libx264 -preset ultrafast -tune zerolatency -profile:v baseline \
//	  -x264-params slices=2:keyint=5 -f h264 testdata/ten.h264
func ten(t testing.TB) []byte {
	b, err := os.ReadFile("testdata/ten.h264")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func split(chunks [][]byte) []h264.AccessUnit {
	var s h264.Splitter
	var out []h264.AccessUnit
	for _, c := range chunks {
		out = append(out, s.Write(c)...)
	}
	return append(out, s.Flush()...)
}

func types(aus []h264.AccessUnit) [][]int {
	var out [][]int
	for _, au := range aus {
		var ts []int
		for _, n := range au.NALs {
			ts = append(ts, h264.NALType(n))
		}
		out = append(out, ts)
	}
	return out
}

func TestSplitter(t *testing.T) {
	data := ten(t)
	aus := split([][]byte{data})
	// x264 puts its SEI (version banner) in the first access unit; each
	// picture is two slices.
	want := [][]int{{7, 8, 6, 5, 5}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {7, 8, 5, 5}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}
	if diff := cmp.Diff(want, types(aus)); diff != "" {
		t.Fatalf("access units (-want +got):\n%s", diff)
	}
	for i, au := range aus {
		if au.Key() != (i%5 == 0) {
			t.Errorf("access unit %d: Key() = %v", i, au.Key())
		}
	}
	for _, size := range []int{1, 2, 3, 7, 100, 1000} {
		var chunks [][]byte
		for b := data; len(b) > 0; b = b[min(size, len(b)):] {
			chunks = append(chunks, b[:min(size, len(b))])
		}
		if diff := cmp.Diff(aus, split(chunks)); diff != "" {
			t.Errorf("written %d bytes at a time (-whole +chunked):\n%s", size, diff)
		}
	}
	var again []byte
	for _, au := range aus {
		again = append(again, au.AnnexB()...)
	}
	if diff := cmp.Diff(aus, split([][]byte{again})); diff != "" {
		t.Errorf("AnnexB then split again (-want +got):\n%s", diff)
	}
}

func TestConfig(t *testing.T) {
	first := split([][]byte{ten(t)})[0]
	c := h264.Config{SPS: first.Find(h264.TypeSPS), PPS: first.Find(h264.TypePPS)}
	if got := c.Codec(); got != "avc1.42C00A" {
		t.Errorf("Codec() = %q, want avc1.42C00A (constrained baseline, level 1)", got)
	}
	rec, err := c.Record()
	if err != nil {
		t.Fatal(err)
	}
	if rec[0] != 1 || rec[4] != 0xff || rec[5] != 0xe1 {
		t.Errorf("record header % x: want version 1, 4-byte lengths, one SPS", rec[:6])
	}
	back, err := h264.ParseRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, back); diff != "" {
		t.Errorf("ParseRecord(Record()) (-want +got):\n%s", diff)
	}
	if _, err := (h264.Config{}).Record(); err == nil {
		t.Error("a config without parameter sets made a record")
	}
}

func TestAVCC(t *testing.T) {
	au := h264.AccessUnit{NALs: [][]byte{{0x09, 0xf0}, {0x65, 1, 2, 3}, {0x0c, 0xff}}}
	want := []byte{0, 0, 0, 4, 0x65, 1, 2, 3} // the delimiter and filler left out
	if got := au.AVCC(); !bytes.Equal(got, want) {
		t.Errorf("AVCC() = % x, want % x", got, want)
	}
}

// TestStreamFlushesWhenQuiet: the last picture of a live stream is sent
// once the encoder goes quiet, not when the next picture starts.
func TestStreamFlushesWhenQuiet(t *testing.T) {
	data := ten(t)
	aus := split([][]byte{data})
	pr, pw := io.Pipe()
	got := make(chan h264.AccessUnit, len(aus))
	errc := make(chan error, 1)
	go func() {
		errc <- h264.Stream(context.Background(), pr, 5*time.Millisecond, func(au h264.AccessUnit) error {
			got <- au
			return nil
		})
	}()
	// Only the first picture: its end shows only by the quiet.
	first := aus[0].AnnexB()
	if _, err := pw.Write(first); err != nil {
		t.Fatal(err)
	}
	select {
	case au := <-got:
		if diff := cmp.Diff(aus[0], au); diff != "" {
			t.Errorf("first access unit (-want +got):\n%s", diff)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first access unit never came out of a quiet stream")
	}
	var rest []byte
	for _, au := range aus[1:] {
		rest = append(rest, au.AnnexB()...)
	}
	if _, err := pw.Write(rest); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := <-errc; err != nil {
		t.Fatalf("Stream: %v", err)
	}
	close(got)
	n := 1
	for range got {
		n++
	}
	if n != len(aus) {
		t.Errorf("%d access units, want %d", n, len(aus))
	}
}

func FuzzSplitter(f *testing.F) {
	f.Add(ten(f), 7)
	f.Add([]byte{0, 0, 1, 0x65, 0x80, 0, 0, 0, 1, 0x41, 0x80}, 1)
	f.Add([]byte{0, 0, 1, 0, 0, 1, 0, 0}, 3)
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		size = max(1, size%4096)
		whole := split([][]byte{data})
		var chunks [][]byte
		for b := data; len(b) > 0; b = b[min(size, len(b)):] {
			chunks = append(chunks, b[:min(size, len(b))])
		}
		if diff := cmp.Diff(whole, split(chunks)); diff != "" {
			t.Errorf("chunked by %d (-whole +chunked):\n%s", size, diff)
		}
		for _, au := range whole {
			if len(au.NALs) == 0 {
				t.Fatal("an empty access unit")
			}
			_ = au.AVCC()
		}
	})
}

func FuzzParseRecord(f *testing.F) {
	first := split([][]byte{ten(f)})[0]
	rec, _ := h264.Config{SPS: first.Find(h264.TypeSPS), PPS: first.Find(h264.TypePPS)}.Record()
	f.Add(rec)
	f.Add([]byte{1, 2, 3, 4, 5, 0xe1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := h264.ParseRecord(b)
		if err != nil {
			return
		}
		if rec, err := c.Record(); err == nil {
			if _, err := h264.ParseRecord(rec); err != nil {
				t.Errorf("a record built from a parsed one does not parse: %v", err)
			}
		}
	})
}

// TestDelimiterEndsAccessUnit: a delimiter after a picture delivers the
// picture at once.
func TestDelimiterEndsAccessUnit(t *testing.T) {
	aus := split([][]byte{ten(t)})
	var s h264.Splitter
	got := s.Write(append(aus[0].AnnexB(), 0, 0, 0, 1, 0x09, 0xf0))
	if len(got) != 1 {
		t.Fatalf("%d access units after the first picture and a delimiter, want 1", len(got))
	}
	if diff := cmp.Diff(aus[0], got[0]); diff != "" {
		t.Errorf("access unit (-want +got):\n%s", diff)
	}
}
