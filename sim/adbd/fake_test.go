package adbd

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"
	"sync"
	"time"
)

// fakePhone is a tiny Phone for this package's tests: one screen with a
// counter button and a text field. The real app model lives in package sim.
type fakePhone struct {
	mu       sync.Mutex
	w, h     int
	taps     int
	text     string
	focused  bool
	fg       string
	pkgs     []Package
	removed  []Package
	settings map[string]string
	keys     []int
	log      []string
}

func newFakePhone() *fakePhone {
	return &fakePhone{w: 360, h: 640, fg: "com.apex.launcher", settings: map[string]string{"global/device_name": "Apex Sim"},
		pkgs: []Package{
			{Name: "com.apex.launcher", Label: "Home", Version: "1.0", LauncherActivity: ".HomeActivity", System: true},
			{Name: "com.apex.shop", Label: "Shop", Version: "1.0", LauncherActivity: ".MainActivity"},
			{Name: "com.apex.debug", Label: "Debug", Version: "1.0", LauncherActivity: ".MainActivity", Debuggable: true},
		}}
}

// button and field bounds.
var (
	fakeButton = image.Rect(40, 200, 320, 280)
	fakeField  = image.Rect(40, 320, 320, 400)
)

func (p *fakePhone) Props() map[string]string {
	return map[string]string{"ro.product.name": "apex_sim", "ro.product.model": "Apex Sim Phone", "ro.product.device": "apexsim",
		"ro.product.brand": "apex", "ro.build.version.release": "14", "ro.build.version.sdk": "34"}
}
func (p *fakePhone) Display() (int, int, int) { return p.w, p.h, 160 }

func (p *fakePhone) DumpUI() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b bytes.Buffer
	b.WriteString(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">`)
	fmt.Fprintf(&b, `<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="%s" content-desc="" clickable="false" bounds="[0,0][%d,%d]">`, p.fg, p.w, p.h)
	fmt.Fprintf(&b, `<node index="0" text="Tapped %d" resource-id="com.apex.shop:id/counter" class="android.widget.Button" package="%s" content-desc="" clickable="true" bounds="[%d,%d][%d,%d]" />`,
		p.taps, p.fg, fakeButton.Min.X, fakeButton.Min.Y, fakeButton.Max.X, fakeButton.Max.Y)
	fmt.Fprintf(&b, `<node index="1" text="%s" resource-id="com.apex.shop:id/field" class="android.widget.EditText" package="%s" content-desc="" clickable="true" focused="%v" bounds="[%d,%d][%d,%d]" />`,
		html.EscapeString(p.text), p.fg, p.focused, fakeField.Min.X, fakeField.Min.Y, fakeField.Max.X, fakeField.Max.Y)
	b.WriteString(`</node></hierarchy>`)
	return b.Bytes(), nil
}

func (p *fakePhone) Frame() (*image.RGBA, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	img := image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	for y := 0; y < p.h; y++ {
		for x := 0; x < p.w; x++ {
			c := color.RGBA{240, 240, 240, 255}
			if (image.Point{x, y}).In(fakeButton) {
				c = color.RGBA{uint8(30 * p.taps), 80, 200, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img, nil
}

func (p *fakePhone) Screenshot() ([]byte, error) {
	img, err := p.Frame()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = png.Encode(&b, img)
	return b.Bytes(), err
}

func (p *fakePhone) Tap(x, y int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pt := image.Pt(x, y)
	switch {
	case pt.In(fakeButton):
		p.taps++
	case pt.In(fakeField):
		p.focused = true
	default:
		p.focused = false
	}
}

func (p *fakePhone) Swipe(x1, y1, x2, y2 int, d time.Duration) {
	if x1 == x2 && y1 == y2 && d < 500*time.Millisecond {
		p.Tap(x1, y1)
	}
}

func (p *fakePhone) InputText(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.focused {
		p.text += text
	}
}

func (p *fakePhone) KeyEvent(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, code)
	if code == 67 && p.focused && p.text != "" {
		r := []rune(p.text)
		p.text = string(r[:len(r)-1])
	}
}

func (p *fakePhone) Launch(pkg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range p.pkgs {
		if q.Name == pkg {
			p.fg = pkg
			p.log = append(p.log, fmt.Sprintf("11-29 19:00:00.000  1000  1000 I ActivityTaskManager: START u0 {cmp=%s}", pkg))
			return nil
		}
	}
	return ErrUnknownPackage
}

func (p *fakePhone) ForceStop(pkg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fg == pkg {
		p.fg = "com.apex.launcher"
	}
}

func (p *fakePhone) Foreground() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fg, ".MainActivity"
}

func (p *fakePhone) Packages() []Package {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Package(nil), p.pkgs...)
}

func (p *fakePhone) Install(pkg Package) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.pkgs {
		if q.Name == pkg.Name {
			p.pkgs[i] = pkg
			return nil
		}
	}
	p.pkgs = append(p.pkgs, pkg)
	return nil
}

func (p *fakePhone) Logcat() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}
func (p *fakePhone) KeyboardShown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.focused
}
func (p *fakePhone) Awake() bool  { return true }
func (p *fakePhone) Locked() bool { return false }
func (p *fakePhone) Setting(ns, key string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.settings[ns+"/"+key]
	return v, ok
}
func (p *fakePhone) PutSetting(ns, key, value string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settings[ns+"/"+key] = value
}

func (p *fakePhone) Settings(ns string) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for k, v := range p.settings {
		if key, ok := strings.CutPrefix(k, ns+"/"); ok {
			out[key] = v
		}
	}
	return out
}
func (p *fakePhone) DeleteSetting(ns, key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.settings[ns+"/"+key]
	delete(p.settings, ns+"/"+key)
	return ok
}

func (p *fakePhone) ResetApp(pkg string) error {
	if !p.installed(pkg) {
		return ErrUnknownPackage
	}
	return nil
}
func (p *fakePhone) Uninstall(pkg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.pkgs {
		if q.Name == pkg {
			p.removed = append(p.removed, q)
			p.pkgs = append(p.pkgs[:i:i], p.pkgs[i+1:]...)
			return nil
		}
	}
	return ErrUnknownPackage
}
func (p *fakePhone) InstallExisting(pkg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.removed {
		if q.Name == pkg {
			p.pkgs = append(p.pkgs, q)
			p.removed = append(p.removed[:i:i], p.removed[i+1:]...)
			return nil
		}
	}
	return ErrUnknownPackage
}
func (p *fakePhone) installed(pkg string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range p.pkgs {
		if q.Name == pkg {
			return true
		}
	}
	return false
}

func (p *fakePhone) Rotation() int {
	v, _ := p.Setting("system", "user_rotation")
	r, _ := strconv.Atoi(v)
	return r
}

func (p *fakePhone) View(uri string) (string, error) {
	return "", fmt.Errorf("the fake phone has no browser: %s", uri)
}

var _ Phone = (*fakePhone)(nil)
