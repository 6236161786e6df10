package sim

import "image"

// Android key codes the phone understands.
const (
	KeycodeHome       = 3
	KeycodeBack       = 4
	KeycodeVolumeUp   = 24
	KeycodeVolumeDown = 25
	KeycodePower      = 26
	KeycodeTab        = 61
	KeycodeEnter      = 66
	KeycodeDel        = 67
	KeycodeMenu       = 82
	KeycodeEscape     = 111
	KeycodeForwardDel = 112
	KeycodeAppSwitch  = 187
	KeycodeSleep      = 223
	KeycodeWakeup     = 224
)

// keyboard is the soft keyboard: drawn, and tappable key by key, but like a
// real IME window it is not part of the app's UI dump.
type keyboard struct {
	r    image.Rectangle
	keys []kbKey
}

type kbKey struct {
	r     image.Rectangle
	label string
	text  string // typed text; empty for special keys
	code  int    // key code for special keys
}

func newKeyboard(w, bottom int, scale float64) *keyboard {
	dp := func(v float64) int { return int(v*scale + 0.5) }
	rowH := dp(56)
	h := 4*rowH + dp(16)
	kb := &keyboard{r: image.Rect(0, bottom-h, w, bottom)}
	rows := []string{"qwertyuiop", "asdfghjkl", "zxcvbnm"}
	kw := w / 10
	y := kb.r.Min.Y + dp(8)
	for i, row := range rows {
		x := (w - kw*len(row)) / 2
		if i == 2 {
			kb.keys = append(kb.keys, kbKey{r: image.Rect(0, y, x, y+rowH), label: "▲", code: -1})
		}
		for _, ch := range row {
			kb.keys = append(kb.keys, kbKey{r: image.Rect(x, y, x+kw, y+rowH), label: string(ch), text: string(ch)})
			x += kw
		}
		if i == 2 {
			kb.keys = append(kb.keys, kbKey{r: image.Rect(x, y, w, y+rowH), label: "←", code: KeycodeDel})
		}
		y += rowH
	}
	kb.keys = append(kb.keys,
		kbKey{r: image.Rect(0, y, kw*2, y+rowH), label: "?123", code: -1},
		kbKey{r: image.Rect(kw*2, y, kw*3, y+rowH), label: ",", text: ","},
		kbKey{r: image.Rect(kw*3, y, kw*7, y+rowH), label: "space", text: " "},
		kbKey{r: image.Rect(kw*7, y, kw*8, y+rowH), label: ".", text: "."},
		kbKey{r: image.Rect(kw*8, y, w, y+rowH), label: "OK", code: KeycodeEnter},
	)
	return kb
}

func (k *keyboard) keyAt(x, y int) *kbKey {
	for i := range k.keys {
		if image.Pt(x, y).In(k.keys[i].r) {
			return &k.keys[i]
		}
	}
	return nil
}
