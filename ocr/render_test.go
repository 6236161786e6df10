package ocr

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// These helpers render test screens with real fonts, so the tests measure
// Tesseract on pixels like a phone's, not on stored fixtures.

const cjkFontPath = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"

// drawn is one piece of text a test put on an image.
type drawn struct {
	text string
	box  image.Rectangle
}

var (
	fontsOnce sync.Once
	goReg     *opentype.Font
	goBold    *opentype.Font
)

func goFonts(t testing.TB) (regular, bold *opentype.Font) {
	t.Helper()
	fontsOnce.Do(func() {
		goReg, _ = opentype.Parse(goregular.TTF)
		goBold, _ = opentype.Parse(gobold.TTF)
	})
	if goReg == nil || goBold == nil {
		t.Fatal("parse Go fonts")
	}
	return goReg, goBold
}

// cjkFont loads the Simplified Chinese face of Noto Sans CJK, skipping the
// test when Debian's fonts-noto-cjk is not installed.
func cjkFont(t testing.TB) *opentype.Font {
	t.Helper()
	data, err := os.ReadFile(cjkFontPath)
	if err != nil {
		t.Skipf("no CJK font (%v): apt-get install fonts-noto-cjk", err)
	}
	coll, err := opentype.ParseCollection(data)
	if err != nil {
		t.Fatalf("parse %s: %v", cjkFontPath, err)
	}
	for i := range coll.NumFonts() {
		f, err := coll.Font(i)
		if err != nil {
			continue
		}
		if name, _ := f.Name(nil, sfnt.NameIDFamily); name == "Noto Sans CJK SC" {
			return f
		}
	}
	t.Fatalf("%s has no Noto Sans CJK SC face", cjkFontPath)
	return nil
}

func face(t testing.TB, f *opentype.Font, px float64) font.Face {
	t.Helper()
	fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: px, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		t.Fatalf("font face %v px: %v", px, err)
	}
	return fc
}

// drawText writes text with its top-left at (x, y) and returns its box.
func drawText(img draw.Image, fc font.Face, x, y int, text string, c color.Color) image.Rectangle {
	m := fc.Metrics()
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: fc,
		Dot: fixed.P(x, y+m.Ascent.Ceil())}
	b, _ := d.BoundString(text)
	d.DrawString(text)
	return image.Rect(b.Min.X.Floor(), b.Min.Y.Floor(), b.Max.X.Ceil(), b.Max.Y.Ceil())
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var canvasWords = strings.Fields(`settings battery network display sound privacy account
	storage wallpaper bluetooth location security language keyboard update backup
	camera gallery music weather calendar contacts message browser payment shopping
	orange purple silver garden window letter travel summer winter market
	coffee dinner ticket flight hotel`)

var (
	canvasMu    sync.Mutex
	canvasPNG   []byte
	canvasDrawn []drawn
)

// canvasScreen renders a 1080x2400 screen like an app's canvas: a title
// bar, coloured cards and about forty words of different sizes, some light
// on dark. It returns the PNG and what was drawn, rendered once per run.
func canvasScreen(t testing.TB) ([]byte, []drawn) {
	t.Helper()
	canvasMu.Lock()
	defer canvasMu.Unlock()
	if canvasPNG == nil {
		canvasPNG, canvasDrawn = renderCanvas(t)
	}
	return canvasPNG, canvasDrawn
}

func renderCanvas(t testing.TB) ([]byte, []drawn) {
	reg, bold := goFonts(t)
	img := image.NewRGBA(image.Rect(0, 0, 1080, 2400))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{250, 250, 250, 255}), image.Point{}, draw.Src)
	rng := rand.New(rand.NewPCG(7, 10))
	var words []drawn
	// Title bar: light text on a dark band.
	draw.Draw(img, image.Rect(0, 0, 1080, 200), image.NewUniform(color.RGBA{33, 60, 120, 255}), image.Point{}, draw.Src)
	words = append(words, drawn{"Dashboard", drawText(img, face(t, bold, 64), 48, 60, "Dashboard", color.White)})
	sizes := []float64{30, 36, 42, 48, 56, 64}
	inks := []color.Color{color.Black, color.RGBA{60, 60, 60, 255}, color.RGBA{20, 80, 160, 255}, color.RGBA{140, 30, 30, 255}}
	y := 260
	i := 0
	for y < 2300 && i < len(canvasWords) {
		size := sizes[rng.IntN(len(sizes))]
		fc := face(t, reg, size)
		if rng.IntN(4) == 0 {
			fc = face(t, bold, size)
		}
		card := i%9 == 4
		rowH := int(size*1.3) + 50
		if card {
			draw.Draw(img, image.Rect(32, y-18, 1048, y+rowH-14), image.NewUniform(color.RGBA{225, 235, 250, 255}), image.Point{}, draw.Src)
		}
		x := 48 + rng.IntN(60)
		for n := 0; n < 3 && i < len(canvasWords); n++ {
			w := canvasWords[i]
			adv := font.MeasureString(fc, w).Ceil()
			if x+adv > 1030 {
				break
			}
			words = append(words, drawn{w, drawText(img, fc, x, y, w, inks[rng.IntN(len(inks))])})
			x += adv + 70 + rng.IntN(120)
			i++
		}
		y += rowH
	}
	return encodePNG(t, img), words
}

// chineseScreen renders Simplified Chinese labels, one per row, at sizes a
// phone uses.
func chineseScreen(t testing.TB) ([]byte, []drawn) {
	t.Helper()
	f := cjkFont(t)
	labels := []string{"设置", "网络和互联网", "蓝牙", "显示", "电池", "存储空间", "安全", "关于手机", "购物车", "立即购买"}
	img := image.NewRGBA(image.Rect(0, 0, 1080, 2400))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	var out []drawn
	y := 120
	for i, l := range labels {
		size := []float64{44, 52, 60}[i%3]
		out = append(out, drawn{l, drawText(img, face(t, f, size), 60, y, l, color.Black)})
		y += 200
	}
	return encodePNG(t, img), out
}

var (
	engineOnce sync.Once
	engine     *Tesseract
	engineErr  error
)

// testEngine returns a shared Tesseract engine, skipping when tesseract is
// absent.
func testEngine(t testing.TB) *Tesseract {
	t.Helper()
	engineOnce.Do(func() { engine, engineErr = NewTesseract(context.Background(), nil) })
	if engineErr != nil {
		t.Skipf("tesseract unavailable: %v", engineErr)
	}
	return engine
}

func TestMain(m *testing.M) {
	code := m.Run()
	if engine != nil {
		engine.Close()
	}
	os.Exit(code)
}

// iou is the overlap of two boxes over their union.
func iou(a, b image.Rectangle) float64 {
	in := a.Intersect(b)
	if in.Empty() {
		return 0
	}
	ia := float64(in.Dx() * in.Dy())
	return ia / (float64(a.Dx()*a.Dy()+b.Dx()*b.Dy()) - ia)
}
