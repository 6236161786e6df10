package sim

import (
	"encoding/xml"
	"fmt"
	"github.com/apexagent/apex/sim/adbd"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 14, 9, 26, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// xnode is a uiautomator node as a test reads it back with encoding/xml.
type xnode struct {
	Index          string  `xml:"index,attr"`
	Text           string  `xml:"text,attr"`
	ResourceID     string  `xml:"resource-id,attr"`
	Class          string  `xml:"class,attr"`
	Package        string  `xml:"package,attr"`
	Desc           string  `xml:"content-desc,attr"`
	Checkable      string  `xml:"checkable,attr"`
	Checked        string  `xml:"checked,attr"`
	Clickable      string  `xml:"clickable,attr"`
	Enabled        string  `xml:"enabled,attr"`
	Focusable      string  `xml:"focusable,attr"`
	Focused        string  `xml:"focused,attr"`
	Scrollable     string  `xml:"scrollable,attr"`
	LongClick      string  `xml:"long-clickable,attr"`
	Password       string  `xml:"password,attr"`
	Selected       string  `xml:"selected,attr"`
	Bounds         string  `xml:"bounds,attr"`
	Children       []xnode `xml:"node"`
	x0, y0, x1, y1 int
}

type xhierarchy struct {
	Rotation string  `xml:"rotation,attr"`
	Nodes    []xnode `xml:"node"`
}

type dump struct {
	t     *testing.T
	h     xhierarchy
	nodes []*xnode
	raw   string
}

func dumpOf(t *testing.T, p *Phone) *dump {
	t.Helper()
	data, err := p.DumpUI()
	if err != nil {
		t.Fatalf("DumpUI: %v", err)
	}
	d := &dump{t: t, raw: string(data)}
	if err := xml.Unmarshal(data, &d.h); err != nil {
		t.Fatalf("DumpUI is not XML: %v\n%s", err, data)
	}
	var walk func(n *xnode)
	walk = func(n *xnode) {
		if _, err := fmt.Sscanf(n.Bounds, "[%d,%d][%d,%d]", &n.x0, &n.y0, &n.x1, &n.y1); err != nil {
			t.Fatalf("bad bounds %q", n.Bounds)
		}
		d.nodes = append(d.nodes, n)
		for i := range n.Children {
			walk(&n.Children[i])
		}
	}
	for i := range d.h.Nodes {
		walk(&d.h.Nodes[i])
	}
	return d
}

// find returns the first node whose text, content-desc or resource id
// (with or without package) equals sel.
func (d *dump) find(sel string) *xnode {
	for _, n := range d.nodes {
		if n.Text == sel || n.Desc == sel || n.ResourceID == sel || strings.HasSuffix(n.ResourceID, ":id/"+sel) {
			return n
		}
	}
	return nil
}

func (d *dump) must(sel string) *xnode {
	d.t.Helper()
	n := d.find(sel)
	if n == nil {
		d.t.Fatalf("no node %q on screen; texts: %s", sel, d.texts())
	}
	return n
}

func (d *dump) all(sel string) []*xnode {
	var out []*xnode
	for _, n := range d.nodes {
		if n.Text == sel || n.Desc == sel || strings.HasSuffix(n.ResourceID, ":id/"+sel) {
			out = append(out, n)
		}
	}
	return out
}

func (d *dump) texts() string {
	var parts []string
	for _, n := range d.nodes {
		if n.Text != "" {
			parts = append(parts, fmt.Sprintf("%q", n.Text))
		} else if n.Desc != "" {
			parts = append(parts, fmt.Sprintf("[%s]", n.Desc))
		}
	}
	return strings.Join(parts, " ")
}

func (n *xnode) center() (int, int) { return (n.x0 + n.x1) / 2, (n.y0 + n.y1) / 2 }

// tapOn taps the centre of the node sel as a client reading the dump would.
func tapOn(t *testing.T, p *Phone, sel string) {
	t.Helper()
	x, y := dumpOf(t, p).must(sel).center()
	p.Tap(x, y)
}

func newTestPhone(t *testing.T, seed int64) (*Phone, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	p, err := NewPhone(Options{Seed: seed, Clock: clk})
	if err != nil {
		t.Fatalf("NewPhone: %v", err)
	}
	return p, clk
}

// child returns the text of the first descendant with the resource id
// suffix id, or "".
func (n *xnode) child(id string) string {
	for i := range n.Children {
		c := &n.Children[i]
		if strings.HasSuffix(c.ResourceID, ":id/"+id) {
			return c.Text
		}
		if t := c.child(id); t != "" {
			return t
		}
	}
	return ""
}

func adbdPackage(name, label string) adbd.Package { return adbd.Package{Name: name, Label: label} }

// scrollTo swipes the scrolling body until sel is wholly on screen.
func scrollTo(t *testing.T, p *Phone, sel string) {
	t.Helper()
	for range 20 {
		d := dumpOf(t, p)
		var sv *xnode
		for _, n := range d.nodes {
			if n.Class == "android.widget.ScrollView" {
				sv = n
			}
		}
		n := d.find(sel)
		if sv == nil {
			if n == nil {
				t.Fatalf("no %q and nothing to scroll: %s", sel, d.texts())
			}
			return
		}
		if n != nil && n.y0 > sv.y0 && n.y1 < sv.y1-10 {
			return
		}
		x, _ := sv.center()
		p.Swipe(x, sv.y1-100, x, sv.y1-400, 200*time.Millisecond)
	}
	t.Fatalf("scrolled 20 times without reaching %q", sel)
}
