// Package h264 splits an H.264 Annex-B byte stream (what `screenrecord
// --output-format=h264` and ffmpeg's raw h264 muxer write) into access
// units, and builds what a WebCodecs decoder is configured with: the
// AVCDecoderConfigurationRecord and length-prefixed (AVCC) frames.
package h264

import "fmt"

// NAL unit types this package tells apart (ITU-T H.264 table 7-1).
const (
	TypeSlice = 1  // a slice of a non-IDR picture
	TypeIDR   = 5  // a slice of an IDR picture: decoding can start here
	TypeSEI   = 6  // supplemental enhancement information
	TypeSPS   = 7  // sequence parameter set
	TypePPS   = 8  // picture parameter set
	TypeAUD   = 9  // access unit delimiter
	TypeEOSeq = 10 // end of sequence
	TypeEOS   = 11 // end of stream
	TypeFill  = 12 // filler data
)

// NALType is the type of a NAL unit (without its start code).
func NALType(nal []byte) int {
	if len(nal) == 0 {
		return 0
	}
	return int(nal[0] & 0x1f)
}

// AccessUnit is one coded picture with the parameter sets and SEI sent
// with it: its NAL units, without start codes.
type AccessUnit struct {
	NALs [][]byte
}

// Key reports whether decoding can start at a: it holds an IDR slice.
func (a AccessUnit) Key() bool {
	for _, n := range a.NALs {
		if NALType(n) == TypeIDR {
			return true
		}
	}
	return false
}

// Find returns the first NAL unit of type typ, or nil.
func (a AccessUnit) Find(typ int) []byte {
	for _, n := range a.NALs {
		if NALType(n) == typ {
			return n
		}
	}
	return nil
}

// AVCC returns the access unit as a decoder configured with a Config
// reads it: each NAL unit after its 4-byte big-endian length. Access unit
// delimiters and filler are left out (they carry nothing to decode).
func (a AccessUnit) AVCC() []byte {
	n := 0
	for _, nal := range a.NALs {
		n += 4 + len(nal)
	}
	out := make([]byte, 0, n)
	for _, nal := range a.NALs {
		if t := NALType(nal); t == TypeAUD || t == TypeFill {
			continue
		}
		l := len(nal)
		out = append(out, byte(l>>24), byte(l>>16), byte(l>>8), byte(l))
		out = append(out, nal...)
	}
	return out
}

// AnnexB returns the access unit as a byte stream: each NAL unit after a
// 4-byte start code.
func (a AccessUnit) AnnexB() []byte {
	var out []byte
	for _, nal := range a.NALs {
		out = append(out, 0, 0, 0, 1)
		out = append(out, nal...)
	}
	return out
}

// Config is a stream's parameter sets: what a decoder is configured with.
type Config struct {
	SPS, PPS []byte
}

// Codec is the codec string of the stream's profile and level, as
// WebCodecs and MIME types name it: "avc1.42C01F".
func (c Config) Codec() string {
	if len(c.SPS) < 4 {
		return "avc1"
	}
	return fmt.Sprintf("avc1.%02X%02X%02X", c.SPS[1], c.SPS[2], c.SPS[3])
}

// Record is the AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.2.4.1)
// of one SPS and one PPS, with 4-byte NAL lengths: a WebCodecs decoder's
// description, after which it reads AVCC frames.
func (c Config) Record() ([]byte, error) {
	if len(c.SPS) < 4 || NALType(c.SPS) != TypeSPS {
		return nil, fmt.Errorf("h264: config record: no sequence parameter set (%d bytes)", len(c.SPS))
	}
	if len(c.PPS) < 1 || NALType(c.PPS) != TypePPS {
		return nil, fmt.Errorf("h264: config record: no picture parameter set (%d bytes)", len(c.PPS))
	}
	if len(c.SPS) > 0xffff || len(c.PPS) > 0xffff {
		return nil, fmt.Errorf("h264: config record: parameter sets of %d and %d bytes (at most 65535)", len(c.SPS), len(c.PPS))
	}
	out := []byte{1, c.SPS[1], c.SPS[2], c.SPS[3], 0xfc | 3, 0xe0 | 1, byte(len(c.SPS) >> 8), byte(len(c.SPS))}
	out = append(out, c.SPS...)
	out = append(out, 1, byte(len(c.PPS)>>8), byte(len(c.PPS)))
	return append(out, c.PPS...), nil
}

// ParseRecord reads an AVCDecoderConfigurationRecord's first SPS and PPS.
func ParseRecord(b []byte) (Config, error) {
	if len(b) < 7 || b[0] != 1 {
		return Config{}, fmt.Errorf("h264: config record of %d bytes: not version 1", len(b))
	}
	var c Config
	rest := b[5:]
	sets := func(mask byte) ([][]byte, error) {
		if len(rest) < 1 {
			return nil, fmt.Errorf("h264: config record cut short")
		}
		n := int(rest[0] & mask)
		rest = rest[1:]
		var out [][]byte
		for range n {
			if len(rest) < 2 {
				return nil, fmt.Errorf("h264: config record cut short")
			}
			l := int(rest[0])<<8 | int(rest[1])
			if len(rest) < 2+l {
				return nil, fmt.Errorf("h264: config record: a parameter set of %d bytes past its end", l)
			}
			out = append(out, rest[2:2+l])
			rest = rest[2+l:]
		}
		return out, nil
	}
	sps, err := sets(0x1f)
	if err != nil {
		return Config{}, err
	}
	pps, err := sets(0xff)
	if err != nil {
		return Config{}, err
	}
	if len(sps) > 0 {
		c.SPS = sps[0]
	}
	if len(pps) > 0 {
		c.PPS = pps[0]
	}
	return c, nil
}
