package h264

import "fmt"

// Size reads the picture's width and height in pixels from the SPS
// (H.264 7.3.2.1.1), after its frame cropping.
func (c Config) Size() (int, int, error) {
	if len(c.SPS) < 4 || NALType(c.SPS) != TypeSPS {
		return 0, 0, fmt.Errorf("h264: size: no sequence parameter set (%d bytes)", len(c.SPS))
	}
	r := bitReader{b: unescape(c.SPS[4:])}
	profile := c.SPS[1]
	r.ue() // seq_parameter_set_id
	chroma := 1
	switch profile {
	case 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135:
		chroma = r.ue()
		if chroma == 3 {
			r.bit() // separate_colour_plane_flag
		}
		r.ue()            // bit_depth_luma_minus8
		r.ue()            // bit_depth_chroma_minus8
		r.bit()           // qpprime_y_zero_transform_bypass_flag
		if r.bit() == 1 { // seq_scaling_matrix_present_flag
			lists := 8
			if chroma == 3 {
				lists = 12
			}
			for i := range lists {
				if r.bit() == 1 {
					n := 64
					if i < 6 {
						n = 16
					}
					skipScalingList(&r, n)
				}
			}
		}
	}
	r.ue()          // log2_max_frame_num_minus4
	switch r.ue() { // pic_order_cnt_type
	case 0:
		r.ue() // log2_max_pic_order_cnt_lsb_minus4
	case 1:
		r.bit()
		r.se()
		r.se()
		for range r.ue() {
			r.se()
		}
	}
	r.ue()  // max_num_ref_frames
	r.bit() // gaps_in_frame_num_value_allowed_flag
	w := (r.ue() + 1) * 16
	mapUnits := r.ue() + 1
	frameMBsOnly := r.bit()
	h := (2 - frameMBsOnly) * mapUnits * 16
	if frameMBsOnly == 0 {
		r.bit() // mb_adaptive_frame_field_flag
	}
	r.bit()           // direct_8x8_inference_flag
	if r.bit() == 1 { // frame_cropping_flag
		cx, cy := 1, 2-frameMBsOnly
		if chroma == 1 || chroma == 2 {
			cx = 2
		}
		if chroma == 1 {
			cy *= 2
		}
		left, right, top, bottom := r.ue(), r.ue(), r.ue(), r.ue()
		w -= cx * (left + right)
		h -= cy * (top + bottom)
	}
	if r.err || w <= 0 || h <= 0 {
		return 0, 0, fmt.Errorf("h264: size: sequence parameter set of %d bytes cut short or broken", len(c.SPS))
	}
	return w, h, nil
}

func skipScalingList(r *bitReader, n int) {
	last, next := 8, 8
	for range n {
		if next != 0 {
			next = (last + r.se() + 256) % 256
		}
		if next != 0 {
			last = next
		}
	}
}

// unescape drops the emulation prevention bytes (the 3 of 0x000003).
func unescape(b []byte) []byte {
	out := make([]byte, 0, len(b))
	zeros := 0
	for _, c := range b {
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
		out = append(out, c)
	}
	return out
}

// bitReader reads an RBSP's bits and Exp-Golomb codes; err is set when
// it reads past the end.
type bitReader struct {
	b   []byte
	pos int // in bits
	err bool
}

func (r *bitReader) bit() int {
	if r.pos >= 8*len(r.b) {
		r.err = true
		return 0
	}
	v := int(r.b[r.pos/8]>>(7-r.pos%8)) & 1
	r.pos++
	return v
}

func (r *bitReader) ue() int {
	zeros := 0
	for r.bit() == 0 && !r.err {
		if zeros++; zeros > 31 {
			r.err = true
			return 0
		}
	}
	v := 1
	for range zeros {
		v = v<<1 | r.bit()
	}
	return v - 1
}

func (r *bitReader) se() int {
	v := r.ue()
	if v%2 == 1 {
		return (v + 1) / 2
	}
	return -v / 2
}
