package android

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
)

func TestParseInfo(t *testing.T) {
	out := "model=Pixel 7\nrelease=14\nPhysical size: 1080x2400\nOverride size: 720x1600\nPhysical density: 420\n"
	got, err := parseInfo(out)
	want := device.Info{Model: "Pixel 7", OSVersion: "14", Width: 720, Height: 1600, Density: 420}
	if err != nil || !cmp.Equal(want, got) {
		t.Fatalf("parseInfo = %+v, %v; want %+v", got, err, want)
	}
	if _, err := parseInfo("model=x\nrelease=\n"); err == nil {
		t.Fatal("parseInfo without wm size succeeded")
	}
}

func TestParseForeground(t *testing.T) {
	tests := map[string]string{
		"  mCurrentFocus=Window{1a2b3c u0 com.apex.shop/com.apex.shop.MainActivity}\n":                                    "com.apex.shop",
		"  mCurrentFocus=Window{9 u0 NotificationShade}\n  mFocusedApp=ActivityRecord{4d5e6f u0 com.apex.notes/.Main t7}": "com.apex.notes",
		"  mCurrentFocus=null\n  mFocusedApp=AppWindowToken{1 token=Token{2 ActivityRecord{3 u0 com.a.b/.X t5}}}":         "com.a.b",
	}
	for in, want := range tests {
		if got, err := parseForeground(in); err != nil || got != want {
			t.Errorf("parseForeground(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parseForeground("nothing here"); !errors.Is(err, device.ErrNotFound) {
		t.Errorf("parseForeground(nothing) err = %v", err)
	}
}

func TestLastComponent(t *testing.T) {
	out := "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\ncom.apex.shop/.MainActivity\n"
	if got := lastComponent(out); got != "com.apex.shop/.MainActivity" {
		t.Fatalf("lastComponent = %q", got)
	}
	if got := lastComponent("No activity found\n"); got != "" {
		t.Fatalf("lastComponent(none) = %q", got)
	}
}

func TestInputTextCommand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello", "input text hello"},
		{"hello world", "input text hello%sworld"},
		{"it's $HOME & `x`", `input text 'it'\''s%s$HOME%s&%s` + "`x`'"},
		{"a\nb", "input text a && input keyevent 66 && input text b"},
		{"100%sure", "input text 100% && input text sure"},
		{"50% off", "input text 50%%soff"},
		{"%s%s", "input text % && input text s% && input text s"},
		{"tab\there", "input text tab && input keyevent 61 && input text here"},
		{"你好", ""},
	}
	for _, tt := range tests {
		got, err := inputTextCommand(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("inputTextCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := inputTextCommand("bell\a"); err == nil {
		t.Error("a control character was accepted")
	}
}

// androidInputText is what Android's `input text` does with its argument
// (Input.java: "%s" becomes a space), to check escaping end to end.
func androidInputText(arg string) string {
	b := []rune(arg)
	esc := false
	for i := 0; i < len(b); i++ {
		if esc {
			esc = false
			if b[i] == 's' {
				b[i] = ' '
				b = append(b[:i-1], b[i:]...)
				i--
			}
		}
		if b[i] == '%' {
			esc = true
		}
	}
	return string(b)
}

// unquote undoes quote for the single-quoted words inputTextCommand makes.
func unquote(s string) string {
	if !strings.HasPrefix(s, "'") {
		return s
	}
	return strings.ReplaceAll(s[1:len(s)-1], `'\''`, "'")
}

func FuzzInputTextCommand(f *testing.F) {
	for _, s := range []string{"hello world", "100%sure", "50% off", "a'b\"c", "%s%s%", "x\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmd, err := inputTextCommand(text)
		if err != nil || cmd == "" {
			return
		}
		var typed strings.Builder
		for _, part := range strings.Split(cmd, " && ") {
			switch {
			case part == "input keyevent 66":
				typed.WriteByte('\n')
			case part == "input keyevent 61":
				typed.WriteByte('\t')
			default:
				arg, ok := strings.CutPrefix(part, "input text ")
				if !ok {
					t.Fatalf("unexpected command %q", part)
				}
				typed.WriteString(androidInputText(unquote(arg)))
			}
		}
		if typed.String() != text {
			t.Fatalf("typing %q via %q gives %q", text, cmd, typed.String())
		}
	})
}

func TestExtractHierarchy(t *testing.T) {
	xml := `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node/></hierarchy>`
	got, err := extractHierarchy([]byte("junk\n" + xml + "UI hierchary dumped to: /dev/tty\n"))
	if err != nil || string(got) != xml {
		t.Fatalf("extractHierarchy = %q, %v", got, err)
	}
	if _, err := extractHierarchy([]byte("ERROR: could not get idle state.\n")); !errors.Is(err, errNotIdle) {
		t.Fatalf("idle error = %v", err)
	}
	if _, err := extractHierarchy([]byte(xml[:40])); !errors.Is(err, errRetry) {
		t.Fatalf("truncated = %v; want a retryable error", err)
	}
}

func rawFrame(w, h int, header16 bool) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(w))
	b = binary.LittleEndian.AppendUint32(b, uint32(h))
	b = binary.LittleEndian.AppendUint32(b, 1)
	if header16 {
		b = binary.LittleEndian.AppendUint32(b, 0)
	}
	return append(b, make([]byte, w*h*4)...)
}

func TestDecodeRaw(t *testing.T) {
	for _, h16 := range []bool{false, true} {
		img, err := decodeRaw(rawFrame(3, 2, h16))
		if err != nil || img.Bounds().Dx() != 3 || img.Bounds().Dy() != 2 {
			t.Fatalf("decodeRaw(16-byte header %v) = %v, %v", h16, img, err)
		}
	}
	if _, err := decodeRaw(rawFrame(3, 2, true)[:30]); !errors.Is(err, errRetry) {
		t.Fatalf("short frame = %v", err)
	}
}

func FuzzDecodeRaw(f *testing.F) {
	f.Add(rawFrame(2, 2, true))
	f.Add(rawFrame(1, 1, false))
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := decodeRaw(b)
		if err == nil && len(img.Pix) != img.Bounds().Dx()*img.Bounds().Dy()*4 {
			t.Fatalf("image of %d bytes for %v", len(img.Pix), img.Bounds())
		}
	})
}

func FuzzParseDeviceOutput(f *testing.F) {
	f.Add("model=x\nPhysical size: 10x20\nPhysical density: 160\n")
	f.Add("  mCurrentFocus=Window{1 u0 a.b/.C}\n")
	f.Fuzz(func(t *testing.T, s string) {
		parseInfo(s)
		parseForeground(s)
		lastComponent(s)
		extractHierarchy([]byte(s))
	})
}

// A phone's `getevent -pl` lists buttons before the panel, whose axes need
// not match the display's pixels.
const geteventPixel = `add device 1: /dev/input/event3
  name:     "gpio-keys"
  events:
    KEY (0001): KEY_VOLUMEDOWN        KEY_VOLUMEUP          KEY_POWER
  input props:
    <none>
add device 2: /dev/input/event2
  name:     "fts"
  events:
    KEY (0001): KEY_WAKEUP            BTN_TOOL_FINGER       BTN_TOUCH
    ABS (0003): ABS_MT_SLOT           : value 0, min 0, max 9, fuzz 0, flat 0, resolution 0
                ABS_MT_TOUCH_MAJOR    : value 0, min 0, max 1440, fuzz 0, flat 0, resolution 0
                ABS_MT_POSITION_X     : value 0, min 0, max 1439, fuzz 0, flat 0, resolution 0
                ABS_MT_POSITION_Y     : value 0, min 0, max 3119, fuzz 0, flat 0, resolution 0
                ABS_MT_TRACKING_ID    : value 0, min 0, max 65535, fuzz 0, flat 0, resolution 0
                ABS_MT_PRESSURE       : value 0, min 0, max 127, fuzz 0, flat 0, resolution 0
  input props:
    INPUT_PROP_DIRECT
@@rotation
      SurfaceOrientation: 1
`

func TestParsePanel(t *testing.T) {
	p, rot, err := parsePanel(geteventPixel)
	if err != nil {
		t.Fatal(err)
	}
	want := touchPanel{path: "/dev/input/event2", maxX: 1439, maxY: 3119, maxID: 65535, pressure: true, major: true}
	if diff := cmp.Diff(want, p, cmp.AllowUnexported(touchPanel{})); diff != "" || rot != 1 {
		t.Errorf("parsePanel (-want +got):\n%s\nrotation %d, want 1", diff, rot)
	}
	// A 720x1560 display on that panel, turned: its landscape top-left is
	// the panel's bottom-left.
	if x, y := p.toPanel(0, 0, 720, 1560, 1); x != 1438 || y != 0 {
		t.Errorf("toPanel(0, 0) turned = %d, %d; want 1438, 0", x, y)
	}
	if _, _, err := parsePanel("add device 1: /dev/input/event0\n  name: \"gpio-keys\"\n@@rotation\n"); !errors.Is(err, device.ErrUnsupported) {
		t.Errorf("no panel: %v, want device.ErrUnsupported", err)
	}
}
