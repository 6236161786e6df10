package h264

import "bytes"

// Splitter cuts an Annex-B byte stream into access units as it arrives.
// Write feeds it bytes and returns the access units they completed; an
// access unit is known complete only when the next one starts, so a live
// stream calls Flush when its input goes quiet (see Stream). It is not
// safe for concurrent use.
type Splitter struct {
	buf  []byte   // bytes not yet cut into NAL units
	au   [][]byte // NAL units of the access unit being gathered
	vcl  bool     // au holds a slice
	seen bool     // a start code has been seen
	from int      // buf[:from] holds no start code (a long NAL unit arrives in many writes)
}

// MaxNAL bounds one NAL unit; a stream whose NAL unit grows past it is
// not H.264 (or is broken), and its bytes are dropped up to the next
// start code.
const MaxNAL = 8 << 20

// Write appends p and returns the access units completed so far.
func (s *Splitter) Write(p []byte) []AccessUnit {
	s.buf = append(s.buf, p...)
	var out []AccessUnit
	for {
		start, n := startCode(s.buf, s.from)
		if start < 0 {
			s.from = max(len(s.buf)-2, 0)
			break
		}
		s.from = 0
		// Bytes before the first start code belong to no NAL unit.
		if s.seen {
			out = s.nal(s.buf[:start], out)
		}
		s.seen = true
		s.buf = s.buf[start+n:]
		out = s.early(out)
	}
	if s.seen {
		out = s.early(out)
	}
	if len(s.buf) > MaxNAL {
		// Keep the last bytes: a start code may straddle the cut.
		s.buf = append(s.buf[:0], s.buf[len(s.buf)-2:]...)
		s.seen, s.from = false, 0
	}
	return out
}

// Flush ends the pending NAL unit and, when it holds a slice, the access
// unit, which it returns. Parameter sets without their slice wait for it.
func (s *Splitter) Flush() []AccessUnit {
	var out []AccessUnit
	if s.seen && len(s.buf) > 0 {
		out = s.nal(s.buf, out)
		s.buf = s.buf[:0]
		s.seen, s.from = false, 0
	}
	if s.vcl {
		out = append(out, AccessUnit{NALs: s.au})
		s.au, s.vcl = nil, false
	}
	return out
}

// Pending reports whether a Flush would complete an access unit.
func (s *Splitter) Pending() bool { return s.vcl || (s.seen && len(s.buf) > 0) }

// nal takes one complete NAL unit, appending to out the access unit it
// ends.
func (s *Splitter) nal(b []byte, out []AccessUnit) []AccessUnit {
	b = trimZeros(b) // trailing_zero_8bits, or a 4-byte start code's first zero
	if len(b) == 0 {
		return out
	}
	nal := bytes.Clone(b)
	if s.vcl && startsAU(nal) {
		out = append(out, AccessUnit{NALs: s.au})
		s.au, s.vcl = nil, false
	}
	s.au = append(s.au, nal)
	if t := NALType(nal); t == TypeSlice || t == TypeIDR {
		s.vcl = true
	}
	return out
}

// early ends the access unit as soon as the NAL unit now arriving shows
// it starts the next one, without waiting for that NAL unit's end: a
// stream that sends a delimiter after each picture has it delivered at
// once.
func (s *Splitter) early(out []AccessUnit) []AccessUnit {
	if !s.vcl || len(s.buf) == 0 {
		return out
	}
	if t := NALType(s.buf); (t == TypeSlice || t == TypeIDR) && len(s.buf) < 2 {
		return out
	}
	if startsAU(s.buf) {
		out = append(out, AccessUnit{NALs: s.au})
		s.au, s.vcl = nil, false
	}
	return out
}

// startsAU reports whether a NAL unit that follows a slice begins a new
// access unit (H.264 7.4.1.2.3): a delimiter, parameter set or SEI, or
// the first slice of a picture (first_mb_in_slice 0, coded as a 1 bit).
func startsAU(nal []byte) bool {
	switch t := NALType(nal); {
	case t == TypeAUD, t == TypeSPS, t == TypePPS, t == TypeSEI, t >= 14 && t <= 18:
		return true
	case t == TypeSlice || t == TypeIDR:
		return len(nal) > 1 && nal[1]&0x80 != 0
	}
	return false
}

// startCode finds the first 0x000001 in b from index from: its index
// and length.
func startCode(b []byte, from int) (int, int) {
	i := bytes.Index(b[from:], []byte{0, 0, 1})
	if i < 0 {
		return -1, 0
	}
	return from + i, 3
}

func trimZeros(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}
