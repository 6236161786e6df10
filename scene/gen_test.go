package scene

import (
	"fmt"
	"strings"
	"testing"
)

// genUIAutomator writes a uiautomator dump of a long product list: a
// status bar, a toolbar and a RecyclerView holding items rows of ~9 nodes
// each, wrapped in wrappers extra layout levels. Rows run far past the
// screen, as they do when an app lays out a whole feed.
func genUIAutomator(items, wrappers int) []byte {
	const w, h, rowH = 1080, 2400, 300
	var b strings.Builder
	b.WriteString("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n<hierarchy rotation=\"0\">\r\n")
	node := func(class, text, id, desc string, clickable, scrollable bool, r Rect, pkg string, close bool) {
		fmt.Fprintf(&b, `<node index="0" text="%s" resource-id="%s" class="%s" package="%s" content-desc="%s" checkable="false" checked="false" clickable="%t" enabled="true" focusable="%t" focused="false" scrollable="%t" long-clickable="false" password="false" selected="false" bounds="[%d,%d][%d,%d]"`,
			text, id, class, pkg, desc, clickable, clickable || scrollable, scrollable, r.X0, r.Y0, r.X1, r.Y1)
		if close {
			b.WriteString(" />\r\n")
		} else {
			b.WriteString(">\r\n")
		}
	}
	const app = "com.example.feed"
	node("android.widget.FrameLayout", "", "", "", false, false, Rect{0, 0, w, h}, app, false)
	for i := 0; i < wrappers; i++ {
		node("android.widget.LinearLayout", "", "", "", false, false, Rect{0, 0, w, h}, app, false)
	}
	node("android.widget.ImageButton", "", "", "Navigate up", true, false, Rect{0, 84, 150, 234}, app, true)
	node("android.widget.TextView", "Feed", app+":id/title", "", false, false, Rect{150, 84, 900, 234}, app, true)
	node("androidx.recyclerview.widget.RecyclerView", "", app+":id/list", "", false, true, Rect{0, 234, w, h}, app, false)
	for i := 0; i < items; i++ {
		y := 234 + i*rowH
		row := Rect{0, y, w, y + rowH}
		node("android.widget.LinearLayout", "", app+":id/row", "", true, false, row, app, false)
		node("android.widget.FrameLayout", "", "", "", false, false, row, app, false)
		node("android.widget.ImageView", "", app+":id/thumb", fmt.Sprintf("Photo %d", i), false, false, Rect{24, y + 24, 276, y + 276}, app, true)
		node("android.widget.LinearLayout", "", "", "", false, false, Rect{300, y, 1056, y + rowH}, app, false)
		node("android.widget.TextView", fmt.Sprintf("Item number %d with a reasonably long product title &amp; details", i), app+":id/name", "", false, false, Rect{300, y + 24, 1056, y + 120}, app, true)
		node("android.widget.TextView", fmt.Sprintf("$%d.99", i%500), app+":id/price", "", false, false, Rect{300, y + 130, 600, y + 190}, app, true)
		node("android.widget.Button", "Add", app+":id/add", "", true, false, Rect{800, y + 200, 1056, y + 280}, app, true)
		b.WriteString("</node>\r\n</node>\r\n</node>\r\n")
	}
	b.WriteString("</node>\r\n")
	for i := 0; i < wrappers; i++ {
		b.WriteString("</node>\r\n")
	}
	b.WriteString("</node>\r\n")
	node("android.widget.FrameLayout", "", "com.android.systemui:id/status_bar", "", false, false, Rect{0, 0, w, 84}, systemUI, false)
	node("android.widget.TextView", "12:30", "com.android.systemui:id/clock", "", false, false, Rect{40, 0, 200, 84}, systemUI, true)
	b.WriteString("</node>\r\n</hierarchy>\r\n")
	return []byte(b.String())
}

// genXCUITest writes a WebDriverAgent source of a table with items cells.
func genXCUITest(items int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Gen" label="Gen" enabled="true" visible="true" x="0" y="0" width="390" height="844"><XCUIElementTypeWindow type="XCUIElementTypeWindow" enabled="true" visible="true" x="0" y="0" width="390" height="844"><XCUIElementTypeTable type="XCUIElementTypeTable" enabled="true" visible="true" x="0" y="100" width="390" height="744">`)
	for i := 0; i < items; i++ {
		y := 100 + i*44
		vis := y+44 <= 844
		fmt.Fprintf(&b, `<XCUIElementTypeCell type="XCUIElementTypeCell" name="row%d" label="Row %d" enabled="true" visible="%t" x="0" y="%d" width="390" height="44"><XCUIElementTypeStaticText type="XCUIElementTypeStaticText" value="Row %d" name="Row %d" label="Row %d" enabled="true" visible="%t" x="16" y="%d" width="300" height="20"/></XCUIElementTypeCell>`,
			i, i, vis, y, i, i, i, vis, y+12)
	}
	b.WriteString(`</XCUIElementTypeTable></XCUIElementTypeWindow></XCUIElementTypeApplication></AppiumAUT>`)
	return []byte(b.String())
}

func TestLargeGeneratedTrees(t *testing.T) {
	const items = 1500
	data := genUIAutomator(items, 20)
	if len(data) < 2<<20 {
		t.Fatalf("generated dump is %d bytes; want megabytes", len(data))
	}
	tr, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	wantNodes := 1 + 1 + 20 + 3 + items*7 + 2
	if tr.Nodes != wantNodes || tr.Width != 1080 || tr.Height != 2400 {
		t.Errorf("nodes %d (want %d), size %dx%d (want the window's 1080x2400)", tr.Nodes, wantNodes, tr.Width, tr.Height)
	}
	s := Build(tr, nil)
	onScreen := (2400 - 234 + 299) / 300 // rows with any part on screen
	lists := find(s, func(e Element) bool { return e.Type == "list" })
	if len(lists) != 1 || lists[0].Note != fmt.Sprintf("+%d items below", items-onScreen) {
		t.Errorf("list = %+v; want +%d items below", lists, items-onScreen)
	}
	rows := find(s, func(e Element) bool { return e.Type == "item" })
	if len(rows) != onScreen || !strings.Contains(rows[0].Text, "$0.99") {
		t.Errorf("%d rows, first %+v; want %d with their text absorbed", len(rows), rows, onScreen)
	}
	if n := len(s.Text()); n > DefaultBudget {
		t.Errorf("Text is %d bytes", n)
	}

	ios, err := FromSource(genXCUITest(items), nil)
	if err != nil {
		t.Fatal(err)
	}
	visible := (844 - 100) / 44
	if l := find(ios, func(e Element) bool { return e.Type == "list" }); len(l) != 1 || l[0].Note != fmt.Sprintf("+%d items below", items-visible) {
		t.Errorf("ios list = %+v; want +%d items below", l, items-visible)
	}
}

// TestBudgetDropsInteractiveLast fills a screen with more visible buttons
// than the budget can list.
func TestBudgetDropsInteractiveLast(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<hierarchy><node class="android.widget.FrameLayout" package="p" bounds="[0,0][1000,2000]">`)
	for i := 0; i < 2000; i++ {
		x, y := (i%20)*50, (i/20)*20
		if i%2 == 0 {
			fmt.Fprintf(&b, `<node class="android.widget.Button" text="b%d" clickable="true" package="p" bounds="[%d,%d][%d,%d]"/>`, i, x, y, x+50, y+20)
		} else {
			fmt.Fprintf(&b, `<node class="android.widget.TextView" text="t%d" package="p" bounds="[%d,%d][%d,%d]"/>`, i, x, y, x+50, y+20)
		}
	}
	b.WriteString(`</node></hierarchy>`)
	s := mustScene(t, []byte(b.String()), 3000)
	if n := len(s.Text()); n > 3000 {
		t.Fatalf("Text is %d bytes", n)
	}
	if len(find(s, func(e Element) bool { return e.Type == "text" })) != 0 {
		t.Error("text kept while buttons were dropped")
	}
	buttons := find(s, func(e Element) bool { return e.Type == "button" })
	if len(buttons) == 0 || buttons[0].Text != "b0" || !strings.Contains(s.Dropped, "1000 text") || !strings.Contains(s.Dropped, "button") {
		t.Errorf("%d buttons (first %+v), dropped %q; want the top buttons kept, all text and the bottom buttons dropped", len(buttons), buttons, s.Dropped)
	}
}

func TestDeepNesting(t *testing.T) {
	nest := func(depth int) []byte {
		return []byte(strings.Repeat(`<node class="a" bounds="[0,0][10,10]">`, depth) + `<node class="b" text="deep" bounds="[0,0][10,10]"/>` + strings.Repeat(`</node>`, depth))
	}
	s, err := FromSource(nest(maxDepth-1), nil)
	if err != nil || len(s.Elements) != 1 {
		t.Fatalf("depth %d: %v, %d elements", maxDepth, err, len(s.Elements))
	}
	if _, err := Parse(nest(maxDepth + 5)); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Fatalf("depth %d: err %v; want a nesting error", maxDepth+5, err)
	}
}
