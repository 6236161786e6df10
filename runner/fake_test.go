package runner

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/png"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/device"
)

// fakeShop is an in-process device.Driver showing a tiny shop app: a home
// screen with a search box (and sometimes a promo popup), results with two
// "Add to cart" buttons, and an order confirmation. It serves real
// uiautomator XML, so the runner's Scene path is the real one.
type fakeShop struct {
	mu      sync.Mutex
	screen  string // home, results, done
	query   string
	focused string
	cart    int
	popup   bool
	// animate is how many Source calls after each input show a changing
	// "Loading" row, to exercise settling.
	animate, frames int
	// offlineAfter > 0 makes every call after that many fail with ErrOffline.
	offlineAfter, calls int
	taps                []device.Point
}

type fakeEl struct {
	class, text, desc, id string
	x0, y0, x1, y1        int
	clickable             bool
}

func newFakeShop() *fakeShop { return &fakeShop{screen: "home"} }

func (f *fakeShop) layout() []fakeEl {
	var els []fakeEl
	switch f.screen {
	case "home":
		els = append(els,
			fakeEl{"android.widget.EditText", f.query, "Search products", "com.apex.shop:id/search", 40, 100, 880, 200, true},
			fakeEl{"android.widget.Button", "Search", "", "com.apex.shop:id/go", 900, 100, 1040, 200, true},
		)
		if f.popup {
			els = append(els,
				fakeEl{"android.widget.TextView", "Summer sale!", "", "com.apex.shop:id/promo", 100, 800, 980, 900, false},
				fakeEl{"android.widget.Button", "Close", "", "com.apex.shop:id/promo_close", 400, 1000, 680, 1100, true},
			)
		}
	case "results":
		els = append(els,
			fakeEl{"android.widget.TextView", "Results for " + f.query, "", "com.apex.shop:id/heading", 40, 100, 1040, 200, false},
			fakeEl{"android.widget.TextView", "Running shoes", "", "com.apex.shop:id/title", 40, 300, 680, 400, false},
			fakeEl{"android.widget.Button", "Add to cart", "", "com.apex.shop:id/add", 700, 300, 1040, 400, true},
			fakeEl{"android.widget.TextView", "Trail shoes", "", "com.apex.shop:id/title", 40, 500, 680, 600, false},
			fakeEl{"android.widget.Button", "Add to cart", "", "com.apex.shop:id/add", 700, 500, 1040, 600, true},
			fakeEl{"android.widget.TextView", fmt.Sprintf("Cart (%d)", f.cart), "", "com.apex.shop:id/cart_count", 40, 2000, 500, 2100, false},
			fakeEl{"android.widget.Button", "Checkout", "", "com.apex.shop:id/checkout", 540, 2000, 1040, 2100, true},
		)
	case "done":
		els = append(els, fakeEl{"android.widget.TextView", "Order placed", "", "com.apex.shop:id/done", 40, 300, 1040, 400, false})
	}
	if f.frames > 0 {
		els = append(els, fakeEl{"android.widget.TextView", fmt.Sprintf("Loading %d", f.frames), "", "com.apex.shop:id/loading", 40, 1500, 1040, 1600, false})
	}
	return els
}

func (f *fakeShop) enter() error {
	f.calls++
	if f.offlineAfter > 0 && f.calls > f.offlineAfter {
		return fmt.Errorf("fake: connection reset: %w", device.ErrOffline)
	}
	return nil
}

func (f *fakeShop) Info(ctx context.Context) (device.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter(); err != nil {
		return device.Info{}, err
	}
	return device.Info{ID: "fake", Platform: device.Android, Model: "Fake", Width: 1080, Height: 2400, Density: 420}, nil
}

var fakePNG = func() []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 4, 8)))
	return b.Bytes()
}()

func (f *fakeShop) Screenshot(ctx context.Context) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter(); err != nil {
		return nil, err
	}
	return fakePNG, nil
}

func (f *fakeShop) Source(ctx context.Context) (device.Source, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter(); err != nil {
		return device.Source{}, err
	}
	var b strings.Builder
	b.WriteString(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">`)
	b.WriteString(`<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.apex.shop" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">`)
	for i, e := range f.layout() {
		fmt.Fprintf(&b, `<node index="%d" text="%s" resource-id="%s" class="%s" package="com.apex.shop" content-desc="%s" checkable="false" checked="false" clickable="%v" enabled="true" focusable="%v" focused="%v" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[%d,%d][%d,%d]" />`,
			i, html.EscapeString(e.text), e.id, e.class, html.EscapeString(e.desc), e.clickable, e.clickable, f.focused == e.id && e.id != "", e.x0, e.y0, e.x1, e.y1)
	}
	b.WriteString(`</node></hierarchy>`)
	if f.frames > 0 {
		f.frames--
	}
	return device.Source{Format: device.FormatUIAutomator, Data: []byte(b.String())}, nil
}

func (f *fakeShop) Tap(ctx context.Context, p device.Point) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter(); err != nil {
		return err
	}
	f.taps = append(f.taps, p)
	var hit *fakeEl
	els := f.layout()
	for i := len(els) - 1; i >= 0; i-- {
		e := els[i]
		if e.clickable && p.X >= e.x0 && p.X < e.x1 && p.Y >= e.y0 && p.Y < e.y1 {
			hit = &e
			break
		}
	}
	if hit == nil {
		return nil
	}
	f.frames = f.animate
	switch hit.id {
	case "com.apex.shop:id/search":
		f.focused = hit.id
	case "com.apex.shop:id/go":
		if !f.popup {
			f.screen = "results"
		}
	case "com.apex.shop:id/promo_close":
		f.popup = false
	case "com.apex.shop:id/add":
		f.cart++
	case "com.apex.shop:id/checkout":
		if f.cart > 0 {
			f.screen = "done"
		}
	}
	return nil
}

func (f *fakeShop) LongPress(ctx context.Context, p device.Point, d time.Duration) error {
	return f.Tap(ctx, p)
}

func (f *fakeShop) Swipe(ctx context.Context, from, to device.Point, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.enter()
}

func (f *fakeShop) InputText(ctx context.Context, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter(); err != nil {
		return err
	}
	if f.focused == "com.apex.shop:id/search" {
		f.query += text
	}
	return nil
}

func (f *fakeShop) PressKey(ctx context.Context, k device.Key) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter(); err != nil {
		return err
	}
	switch k {
	case device.KeyDelete:
		if f.focused == "com.apex.shop:id/search" && f.query != "" {
			f.query = f.query[:len(f.query)-1]
		}
	case device.KeyBack:
		f.screen = "home"
	case device.KeyEnter:
		if f.screen == "home" && f.query != "" {
			f.screen = "results"
		}
	}
	return nil
}

func (f *fakeShop) LaunchApp(ctx context.Context, app string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter(); err != nil {
		return err
	}
	if app != "com.apex.shop" {
		return fmt.Errorf("launch %s: %w", app, device.ErrNotFound)
	}
	return nil
}

func (f *fakeShop) TerminateApp(ctx context.Context, app string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter(); err != nil {
		return err
	}
	f.screen, f.query, f.cart = "home", "", 0
	return nil
}

func (f *fakeShop) ForegroundApp(ctx context.Context) (string, error) { return "com.apex.shop", nil }
func (f *fakeShop) Lock(ctx context.Context) error                    { return nil }
func (f *fakeShop) Unlock(ctx context.Context) error                  { return nil }
func (f *fakeShop) Close() error                                      { return nil }

var _ device.Driver = (*fakeShop)(nil)
