package sim

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apexagent/apex/scene"
)

func newIPhone(t *testing.T) *Phone {
	t.Helper()
	p, err := NewPhone(Options{Platform: PlatformIOS, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIOSDefaults(t *testing.T) {
	p := newIPhone(t)
	if w, h, dpi := p.Display(); w != 1170 || h != 2532 || dpi != 480 {
		t.Errorf("display %dx%d @%d; want 1170x2532 @480 (scale 3)", w, h, dpi)
	}
	if p.Platform() != PlatformIOS || !strings.Contains(p.Model(), "iPhone") {
		t.Errorf("platform %s model %s", p.Platform(), p.Model())
	}
	a, err := NewPhone(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Platform() != PlatformAndroid {
		t.Errorf("default platform %s", a.Platform())
	}
	if _, err := NewPhone(Options{Platform: "symbian"}); err == nil || !strings.Contains(err.Error(), `"symbian"`) {
		t.Errorf("unknown platform: %v", err)
	}
}

// TestXCUITreeGeometry checks the tree is in points: every element lies
// on the 390×844 screen, and a tap at an element's centre (in pixels)
// reaches it.
func TestXCUITreeGeometry(t *testing.T) {
	p := newIPhone(t)
	if err := p.Launch("com.apex.login"); err != nil {
		t.Fatal(err)
	}
	root := p.XCUITree()
	if root.Type != "XCUIElementTypeApplication" || root.Label != "Login" || root.Rect != image.Rect(0, 0, 390, 844) {
		t.Fatalf("root %s %q %v", root.Type, root.Label, root.Rect)
	}
	screen := image.Rect(0, 0, 390, 844)
	var user *XCUIElement
	var types []string
	root.Walk(func(e *XCUIElement) bool {
		if !e.Rect.In(screen) {
			t.Errorf("%s %q at %v is off the screen", e.Type, e.Name(), e.Rect)
		}
		if e.Identifier == "username" {
			user = e
		}
		if !slices.Contains(types, e.Type) {
			types = append(types, e.Type)
		}
		return true
	})
	for _, want := range []string{"XCUIElementTypeWindow", "XCUIElementTypeNavigationBar", "XCUIElementTypeStaticText",
		"XCUIElementTypeTextField", "XCUIElementTypeSecureTextField", "XCUIElementTypeSwitch", "XCUIElementTypeButton"} {
		if !slices.Contains(types, want) {
			t.Errorf("Login has no %s (types %v)", want, types)
		}
	}
	if user == nil || user.Placeholder != "Username" || !user.HasValue || user.Value != "Username" {
		t.Fatalf("username field %+v", user)
	}
	c := user.Rect.Min.Add(user.Rect.Max).Mul(IOSScale).Div(2)
	p.Tap(c.X, c.Y)
	if !p.KeyboardShown() {
		t.Fatal("tap at the field's centre ×3 did not focus it")
	}
	if kb := findType(p.XCUITree(), "XCUIElementTypeKeyboard"); kb == nil || len(kb.Children) < 26 || kb.Rect.Max.Y > 844-34 {
		t.Errorf("keyboard %+v", kb)
	}
}

func findType(e *XCUIElement, typ string) *XCUIElement {
	var out *XCUIElement
	e.Walk(func(x *XCUIElement) bool {
		if x.Type == typ {
			out = x
			return false
		}
		return true
	})
	return out
}

// TestXCUISourceEveryApp parses every built-in app's iOS source with the
// scene package.
func TestXCUISourceEveryApp(t *testing.T) {
	for _, spec := range BuiltinApps() {
		t.Run(spec.Package, func(t *testing.T) {
			p := newIPhone(t)
			if err := p.Launch(spec.Package); err != nil {
				t.Fatal(err)
			}
			src := p.SourceXCUI()
			tr, err := scene.Parse(src)
			if err != nil {
				t.Fatalf("scene.Parse: %v\n%s", err, src)
			}
			if tr.Format != scene.FormatXCUITest || tr.Width != 390 || tr.Height != 844 {
				t.Errorf("%s %dx%d", tr.Format, tr.Width, tr.Height)
			}
			sc := scene.Build(tr, nil)
			if len(sc.Elements) == 0 {
				t.Errorf("empty scene:\n%s", src)
			}
			if err := xml.Unmarshal(src, new(any)); err != nil && err != io.EOF {
				t.Errorf("not well-formed XML: %v", err)
			}
		})
	}
}

// TestXCUIAttributesAsRealWDA compares the attribute names the simulated
// source writes with those of real WebDriverAgent sources in the shared
// corpus: each must occur in a real one.
func TestXCUIAttributesAsRealWDA(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/ios/*.xml")
	if len(files) == 0 {
		t.Skip("no ../shared/corpus/ios: real iOS sources are not checked out next to the repo")
	}
	real := map[string]bool{}
	tags := map[string]bool{}
	for _, f := range files {
		if strings.Contains(f, "macos") {
			continue // Mac2 sources name attributes differently
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		collectAttrs(t, data, real, tags)
	}
	p := newIPhone(t)
	for _, app := range []string{"com.apex.shop", "com.apex.login", "com.android.settings"} {
		if err := p.Launch(app); err != nil {
			t.Fatal(err)
		}
		ours, ourTags := map[string]bool{}, map[string]bool{}
		collectAttrs(t, p.SourceXCUI(), ours, ourTags)
		for a := range ours {
			if !real[a] && !newerWDAAttrs[a] {
				t.Errorf("%s: attribute %q never occurs in real WebDriverAgent sources", app, a)
			}
		}
		for _, must := range []string{"type", "name", "label", "enabled", "visible", "accessible", "x", "y", "width", "height", "index"} {
			if !ours[must] {
				t.Errorf("%s: no %q attribute", app, must)
			}
		}
		for tag := range ourTags {
			if !strings.HasPrefix(tag, "XCUIElementType") {
				t.Errorf("%s: tag %s", app, tag)
			}
		}
	}
}

// newerWDAAttrs are attributes WebDriverAgent's XML writer (FBXPath) has
// that the corpus sources, from older versions, lack.
var newerWDAAttrs = map[string]bool{"placeholderValue": true, "selected": true}

func collectAttrs(t *testing.T, data []byte, attrs, tags map[string]bool) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("xml: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			tags[se.Name.Local] = true
			for _, a := range se.Attr {
				attrs[a.Name.Local] = true
			}
		}
	}
}

// TestIOSScreenshot checks the iPhone look: a light status bar over an
// app, no Android navigation bar, a dark home indicator.
func TestIOSScreenshot(t *testing.T) {
	p := newIPhone(t)
	if err := p.Launch("com.apex.shop"); err != nil {
		t.Fatal(err)
	}
	data, err := p.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 1170, 2532) {
		t.Fatalf("bounds %v", img.Bounds())
	}
	at := func(x, y int) color.RGBA {
		r, g, b, _ := img.At(x, y).RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}
	}
	if c := at(600, 10); c != iosBarBg {
		t.Errorf("status bar at (600,10) = %v; want the light bar %v", c, iosBarBg)
	}
	if c := at(585, 2532-30); c.R > 40 || c.G > 40 || c.B > 40 {
		t.Errorf("home indicator at (585,2502) = %v; want near black", c)
	}
	if c := at(30, 2532-60); c != white {
		t.Errorf("bottom-left corner (30,2472) = %v; want the white app surface, no navigation bar", c)
	}
}

func TestEncodeFlatRoundTrip(t *testing.T) {
	for _, size := range []image.Point{{1, 1}, {7, 5}, {390, 120}} {
		img := image.NewRGBA(image.Rect(0, 0, size.X+3, size.Y+2))
		for y := range img.Rect.Dy() {
			for x := range img.Rect.Dx() {
				// Flat bands with some noise: equal rows and changing ones.
				v := uint8(x * 7 / (1 + y%3))
				if y%4 == 1 {
					v = uint8(y)
				}
				img.SetRGBA(x, y, color.RGBA{v, v ^ 0x5a, uint8(x + y), 255})
			}
		}
		sub := img.SubImage(image.Rect(2, 1, 2+size.X, 1+size.Y)).(*image.RGBA)
		var buf bytes.Buffer
		if err := encodeFlat(&buf, sub); err != nil {
			t.Fatal(err)
		}
		checkZlib(t, buf.Bytes())
		got, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%v: decode: %v", size, err)
		}
		if got.Bounds().Size() != size {
			t.Fatalf("%v: decoded %v", size, got.Bounds())
		}
		for y := range size.Y {
			for x := range size.X {
				r, g, b, a := got.At(x, y).RGBA()
				want := sub.RGBAAt(x+2, y+1)
				if uint8(r>>8) != want.R || uint8(g>>8) != want.G || uint8(b>>8) != want.B || a != 0xffff {
					t.Fatalf("%v: pixel (%d,%d) = %v %v %v; want %v", size, x, y, r>>8, g>>8, b>>8, want)
				}
			}
		}
	}
	// Bands of equal rows (long runs take their own deflate blocks), for
	// widths whose rows leave every tail length of back-references.
	for _, w := range []int{1, 2, 3, 84, 85, 86, 87, 390, 1170} {
		img := image.NewRGBA(image.Rect(0, 0, w, 97))
		for y := range 97 {
			band := uint8(y / 13)
			for x := range w {
				img.SetRGBA(x, y, color.RGBA{band * 20, uint8(x) ^ band, 7, 255})
			}
		}
		roundTrip(t, img)
	}
	if err := encodeFlat(io.Discard, image.NewRGBA(image.Rect(0, 0, 0, 0))); err == nil {
		t.Error("empty image encoded")
	}
}

func roundTrip(t *testing.T, img *image.RGBA) {
	t.Helper()
	var buf bytes.Buffer
	if err := encodeFlat(&buf, img); err != nil {
		t.Fatal(err)
	}
	checkZlib(t, buf.Bytes())
	got, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("%v: decode: %v", img.Rect, err)
	}
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
			r, g, b, _ := got.At(x-img.Rect.Min.X, y-img.Rect.Min.Y).RGBA()
			if want := img.RGBAAt(x, y); uint8(r>>8) != want.R || uint8(g>>8) != want.G || uint8(b>>8) != want.B {
				t.Fatalf("%v: pixel (%d,%d) = %d %d %d; want %v", img.Rect, x, y, r>>8, g>>8, b>>8, want)
			}
		}
	}
}

// checkZlib inflates a PNG's IDAT to its end, which verifies the Adler-32
// (image/png stops reading once it has the pixels).
func checkZlib(t *testing.T, data []byte) {
	t.Helper()
	var idat []byte
	for p := data[8:]; len(p) >= 12; {
		n := int(binary.BigEndian.Uint32(p))
		if string(p[4:8]) == "IDAT" {
			idat = append(idat, p[8:8+n]...)
		}
		p = p[12+n:]
	}
	zr, err := zlib.NewReader(bytes.NewReader(idat))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(zr); err != nil {
		t.Fatalf("inflate IDAT: %v", err)
	}
}
