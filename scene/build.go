package scene

import (
	"slices"
	"strings"
	"unicode"
)

// DefaultBudget is the byte budget of Scene.Text when Options.Budget is 0.
const DefaultBudget = 5000

// Options tune Build. A nil *Options means the defaults.
type Options struct {
	// Budget is the most bytes Scene.Text may take; 0 means DefaultBudget.
	Budget int
}

func (o *Options) budget() int {
	if o == nil || o.Budget <= 0 {
		return DefaultBudget
	}
	return o.Budget
}

// FromSource parses a UI source and builds its Scene.
func FromSource(data []byte, opts *Options) (*Scene, error) {
	t, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return Build(t, opts), nil
}

// Build prunes a tree into a Scene in three levels:
//
//  1. only what is visible: inside the screen and inside every ancestor's
//     bounds, not zero-sized, not marked invisible;
//  2. only nodes a person can act on (clickable, long-clickable, checkable,
//     scrollable, editable — disabled ones too, marked) or that carry text
//     or a description. Layout wrappers vanish; the text inside a
//     clickable container without its own text becomes that container's
//     text ("Wireless earbuds · $29.99"), so one element says what tapping
//     it means. An absorbed node with a resource id of its own stays
//     addressable as a part of that element (Element.Part), left out of
//     Text;
//  3. lists (RecyclerView, ListView, ScrollView, UITableView, …) keep the
//     items on screen and say what is cut in their Note ("+12 items below").
//
// Elements get ids e1, e2, … in reading order. If their lines do not fit
// the budget, Build drops, in this order, status/navigation-bar text,
// other non-interactive text and images, status/navigation-bar controls
// and, last, interactive elements — each group from the bottom of the
// screen up — and summarises what went in Scene.Dropped.
func Build(t *Tree, opts *Options) *Scene {
	b := builder{screen: Rect{0, 0, t.Width, t.Height}, xcui: t.Format == FormatXCUITest}
	if t.Root != nil {
		b.walk(t.Root, b.screen, walkCtx{}, true)
	}
	kept := b.finish()
	if b.xcui && b.sawHidden && !hasApp(kept) {
		// Everything hidden: WebDriverAgent's visibility is wrong here.
		b = builder{screen: b.screen, xcui: true, ignoreHidden: true}
		b.walk(t.Root, b.screen, walkCtx{}, true)
		kept = b.finish()
	}
	s := &Scene{Width: t.Width, Height: t.Height, Format: t.Format, Budget: opts.budget()}
	s.Package = foreground(kept)
	if s.Package == "" && t.Format == FormatXCUITest && t.Root != nil {
		s.Package = appName(t.Root)
	}
	s.Empty = !hasApp(kept)
	s.Keyboard = b.keyboard
	fit(s, kept)
	s.Stats = Stats{NodesIn: t.Nodes, ElementsOut: len(s.Elements), BytesIn: t.Bytes, BytesOut: len(s.Text())}
	return s
}

// hasApp reports whether any candidate is more than system bars and
// empty containers: something with text or a control.
func hasApp(cs []*cand) bool {
	for _, c := range cs {
		if !c.el.System && (c.el.Text != "" || c.el.Desc != "" || c.interactive && c.list == nil) {
			return true
		}
	}
	return false
}

type builder struct {
	xcui bool
	// WebDriverAgent's visible="false" is unreliable (SpringBoard reports
	// everything hidden): when honouring it leaves nothing, Build walks
	// again ignoring it.
	ignoreHidden, sawHidden bool
	screen                  Rect
	cands                   []*cand
	keyboard                bool // a soft keyboard is on screen
}

// cand is a node on its way to becoming an element.
type cand struct {
	el          Element
	pkg         string
	interactive bool
	parts       []string  // text absorbed from non-interactive descendants
	descParts   []string  // descriptions absorbed, shown after the text
	inner       []Element // absorbed nodes with a resource id: kept as parts
	list        *listCut  // set for list containers
	tier        int       // drop order under the budget: lower goes first
	seq         int       // document order, to break ties
}

// listCut counts the items a list holds beyond what is on screen.
type listCut struct {
	horizontal                bool
	cutBefore, cutAfter       bool // an item's bounds cross the list's edge
	above, below, left, right int
	clip                      Rect // the list's visible rectangle
	// The tallest and widest item, and the item reaching furthest down and
	// right: uiautomator clips bounds to what is visible, so an item cut
	// by the list's edge shows as one shorter than its siblings.
	maxH, maxW   int
	last, right1 Rect
}

type walkCtx struct {
	pkg      string
	system   bool
	parent   *cand // nearest ancestor that became a candidate
	absorber *cand // clickable ancestor without text of its own
	owner    *cand // nearest interactive ancestor (lists aside)
	items    *cand // the list whose items are this node's siblings
	// forward is set on the only child of a list when it is a bare
	// wrapper (ScrollView > LinearLayout > items): its children are the
	// list's items.
	forward bool
	web     bool // inside a WebView
	webClip Rect // the outermost WebView's visible rectangle
}

const systemUI = "com.android.systemui"

func (b *builder) walk(n *Node, clip Rect, c walkCtx, root bool) {
	if !n.Visible && !b.ignoreHidden {
		b.sawHidden = true
		if c.items != nil && !c.forward && n.hasBounds {
			c.items.list.count(n.Bounds, Rect{}, clip) // a hidden item still says more exist
		}
		return
	}
	r := clip
	if n.hasBounds && !root {
		if n.Bounds.Empty() {
			// A zero-sized node shows nothing itself, but web content and
			// some custom layouts hang visible children under one.
			for _, ch := range n.Children {
				b.walk(ch, clip, c, false)
			}
			return
		}
		r = intersect(n.Bounds, clip)
		if c.items != nil && !c.forward {
			c.items.list.count(n.Bounds, r, clip)
		}
		if r.Empty() {
			return
		}
	}
	if n.Package != "" {
		if n.Package != c.pkg && isIME(n.Package) {
			b.keyboard = true
		}
		c.pkg = n.Package
	}
	if b.xcui && n.Class == "XCUIElementTypeKeyboard" {
		b.keyboard = true
	}
	if !c.system {
		c.system = isSystemBar(n, c.pkg, r, b.screen)
	}
	text, desc := clean(n.Text), clean(n.Desc)
	if desc == text {
		desc = ""
	}
	if b.xcui && !n.Clickable && !n.Editable && !n.Checkable && (n.innerText || isXCUIChrome(n.Class, text)) {
		// iOS containers repeat their children's labels (a NavigationBar
		// named after its title, an Other holding every label below it):
		// the children say it once.
		text, desc = "", ""
	}
	f := Flags{
		Clickable: n.Clickable, LongClickable: n.LongClickable, Checkable: n.Checkable,
		Checked: n.Checked, Editable: n.Editable, Scrollable: n.Scrollable, Selected: n.Selected,
		Focused: n.Focused, Disabled: !n.Enabled, Password: n.Password,
	}
	// A disabled control often reports clickable="false"; it is still a
	// control, shown as disabled.
	interactive := f.Interactive() || !n.Enabled && isControlClass(n.Class)
	isList := !root && n.hasBounds && len(n.Children) > 0 && (isListClass(n.Class) ||
		n.Scrollable && !n.Editable && !strings.Contains(n.Class, "Spinner") && !strings.Contains(n.Class, "WebView"))
	next := c
	next.items, next.forward = nil, false
	if c.forward {
		next.items = c.items
		next.forward = len(n.Children) == 1 && isWrapper(n.Children[0])
	}

	switch {
	case root || (!interactive && !isList && text == "" && desc == ""):
		// A layout wrapper: only its descendants matter.
	case !interactive && !isList && c.absorber != nil:
		if text != "" {
			c.absorber.parts = append(c.absorber.parts, truncRunes(text, maxPartRunes))
		} else {
			c.absorber.descParts = append(c.absorber.descParts, truncRunes(desc, maxPartRunes))
		}
		if addressable(n.ResourceID) {
			// The row says this text; its resource id must still answer
			// (a script's {id: quantity}), so it stays, as a part.
			c.absorber.inner = append(c.absorber.inner, Element{
				Type: elementType(n, f, false), Text: strings.Clone(text), Desc: strings.Clone(desc),
				ResourceID: strings.Clone(n.ResourceID), Class: strings.Clone(n.Class), Bounds: r, Flags: f,
				Source: "tree", Confidence: 1, System: c.system,
			})
		}
	case !interactive && !isList && c.owner != nil && repeats(c.owner, text, desc):
		// The label of a cell or button said again by a text inside it.
	case interactive && !isList && c.parent != nil && c.parent.interactive && c.parent.list == nil && c.parent.el.Bounds == r:
		// Same rectangle as the clickable parent (a Button inside a
		// clickable frame): one thing on screen, one element.
		merge(c.parent, n, f, text, desc)
		if c.parent.el.Text != "" || c.parent.el.Desc != "" {
			next.absorber = nil
		}
	default:
		me := &cand{pkg: c.pkg, interactive: interactive, seq: len(b.cands)}
		me.el = Element{
			// Clones: the tree's strings share one copy of the whole
			// source, which a long-lived Scene should not pin.
			Type: elementType(n, f, c.items != nil), Text: strings.Clone(text), Desc: strings.Clone(desc),
			ResourceID: strings.Clone(n.ResourceID), Class: strings.Clone(n.Class), Bounds: r, Flags: f,
			Source: "tree", Confidence: 1, System: c.system,
		}
		b.cands = append(b.cands, me)
		next.parent = me
		switch {
		case isList:
			me.el.Type = TypeList
			me.list = &listCut{horizontal: strings.Contains(n.Class, "Horizontal") || r.X1-r.X0 > 2*(r.Y1-r.Y0)}
			next.items = me
			next.forward = len(n.Children) == 1 && isWrapper(n.Children[0])
			next.absorber = nil
		case interactive && text == "" && desc == "" && r.area() <= b.screen.area()/3:
			next.absorber, next.owner = me, me
		case interactive:
			next.absorber, next.owner = nil, me
		}
	}
	childClip := r
	switch {
	case next.web:
		// DOM boxes overflow their parents freely: only the web view clips.
		childClip = next.webClip
	case strings.Contains(n.Class, "WebView"):
		next.web, next.webClip = true, r
	}
	for _, ch := range n.Children {
		b.walk(ch, childClip, next, false)
	}
}

// count records an item of a list: hidden entirely (its visible part vis
// is empty) or on screen.
func (l *listCut) count(item, vis, clip Rect) {
	if item.Empty() {
		return
	}
	if vis.Empty() {
		// Off screen, or hidden by the source while partly on screen.
		switch {
		case item.Y1 > clip.Y1 && item.Y0 >= clip.Y0:
			l.below++
		case item.Y0 < clip.Y0 && item.Y1 <= clip.Y1:
			l.above++
		case item.X1 > clip.X1:
			l.right++
		case item.X0 < clip.X0:
			l.left++
		}
		return
	}
	l.clip = clip
	if l.horizontal {
		l.cutBefore = l.cutBefore || item.X0 < clip.X0
		l.cutAfter = l.cutAfter || item.X1 > clip.X1
	} else {
		l.cutBefore = l.cutBefore || item.Y0 < clip.Y0
		l.cutAfter = l.cutAfter || item.Y1 > clip.Y1
	}
	l.maxH = max(l.maxH, vis.Y1-vis.Y0)
	l.maxW = max(l.maxW, vis.X1-vis.X0)
	if l.last.Empty() || vis.Y1 > l.last.Y1 {
		l.last = vis
	}
	if l.right1.Empty() || vis.X1 > l.right1.X1 {
		l.right1 = vis
	}
}

func (l *listCut) note(scrollable bool) string {
	var parts []string
	add := func(n int, where string) {
		if n == 1 {
			parts = append(parts, "+1 item "+where)
		} else if n > 1 {
			parts = append(parts, "+"+itoa(n)+" items "+where)
		}
	}
	add(l.above, "above")
	add(l.below, "below")
	add(l.left, "left")
	add(l.right, "right")
	if !scrollable || l.maxH == 0 {
		return strings.Join(parts, ", ")
	}
	cut := func(r Rect, vertical bool) bool {
		if vertical {
			return (r.Y1-r.Y0)*10 < l.maxH*9
		}
		return (r.X1-r.X0)*10 < l.maxW*9
	}
	// A short item at the top may be a header, so only bounds crossing
	// the edge say there is more before; after, a short last item does too.
	switch {
	case l.horizontal && l.left == 0 && l.cutBefore:
		parts = append(parts, "more left")
	case !l.horizontal && l.above == 0 && l.cutBefore:
		parts = append(parts, "more above")
	}
	switch {
	case l.horizontal && l.right == 0 && (l.cutAfter || l.right1.X1 >= l.clip.X1 && cut(l.right1, false)):
		parts = append(parts, "more right")
	case !l.horizontal && l.below == 0 && (l.cutAfter || l.last.Y1 >= l.clip.Y1 && cut(l.last, true)):
		parts = append(parts, "more below")
	}
	return strings.Join(parts, ", ")
}

// finish decides which candidates become elements and puts them in
// reading order.
func (b *builder) finish() []*cand {
	kept := b.cands[:0:0]
	for _, c := range b.cands {
		if parts := append(c.parts, c.descParts...); len(parts) > 0 && c.el.Text == "" {
			c.el.Text = strings.Clone(strings.Join(parts, " · "))
		}
		if c.list != nil {
			c.el.Note = c.list.note(c.el.Flags.Scrollable)
		}
		if !c.interactive && c.el.Text == "" && c.el.Desc == "" && c.el.Note == "" {
			continue
		}
		switch {
		case c.el.System && !c.interactive:
			c.tier = 0
		case !c.interactive:
			c.tier = 1
		case c.el.System:
			c.tier = 2
		default:
			c.tier = 3
		}
		kept = append(kept, c)
	}
	readingOrder(kept)
	return kept
}

// readingOrder sorts top-to-bottom, left-to-right. Elements of about
// the same height (within 3x) whose vertical spans overlap by half the
// smaller one share a row, so a label a few pixels lower than its icon
// still reads after it; a list never shares a row with its items.
func readingOrder(cs []*cand) {
	slices.SortStableFunc(cs, func(a, b *cand) int {
		ra, rb := a.el.Bounds, b.el.Bounds
		if ra.Y0 != rb.Y0 {
			return ra.Y0 - rb.Y0
		}
		if ra.X0 != rb.X0 {
			return ra.X0 - rb.X0
		}
		return rb.area() - ra.area() // containers before their contents
	})
	out := make([]*cand, 0, len(cs))
	taken := make([]bool, len(cs))
	var row []*cand
	for i := range cs {
		if taken[i] {
			continue
		}
		anchor := cs[i].el.Bounds
		row = append(row[:0], cs[i])
		for j := i + 1; j < len(cs) && cs[j].el.Bounds.Y0 < anchor.Y1; j++ {
			if !taken[j] && sameRow(anchor, cs[j].el.Bounds) {
				taken[j] = true
				row = append(row, cs[j])
			}
		}
		slices.SortStableFunc(row, func(a, b *cand) int { return a.el.Bounds.X0 - b.el.Bounds.X0 })
		out = append(out, row...)
	}
	copy(cs, out)
}

func sameRow(a, b Rect) bool {
	if contains(a, b) || contains(b, a) {
		return false // a container reads before its contents, not beside them
	}
	ha, hb := a.Y1-a.Y0, b.Y1-b.Y0
	lo, hi := min(ha, hb), max(ha, hb)
	if hi > 3*lo {
		return false
	}
	overlap := min(a.Y1, b.Y1) - max(a.Y0, b.Y0)
	return overlap*2 >= lo
}

func merge(p *cand, n *Node, f Flags, text, desc string) {
	pf := &p.el.Flags
	pf.Clickable = pf.Clickable || f.Clickable
	pf.LongClickable = pf.LongClickable || f.LongClickable
	pf.Checkable = pf.Checkable || f.Checkable
	pf.Checked = pf.Checked || f.Checked
	pf.Editable = pf.Editable || f.Editable
	pf.Scrollable = pf.Scrollable || f.Scrollable
	pf.Selected = pf.Selected || f.Selected
	pf.Focused = pf.Focused || f.Focused
	pf.Disabled = pf.Disabled || f.Disabled
	pf.Password = pf.Password || f.Password
	if p.el.Text == "" && p.el.Desc == "" {
		p.el.Text, p.el.Desc = strings.Clone(text), strings.Clone(desc)
	}
	if p.el.ResourceID == "" {
		p.el.ResourceID = strings.Clone(n.ResourceID)
	}
	// The inner widget says more about what it is than its frame.
	if t := elementType(n, f, false); t != TypeContainer && t != TypeButton || p.el.Type == TypeContainer {
		p.el.Type, p.el.Class = t, strings.Clone(n.Class)
	}
}

// repeats reports whether text and desc only repeat what the owner says.
func repeats(owner *cand, text, desc string) bool {
	in := func(s string) bool {
		return s == "" || strings.Contains(owner.el.Text, s) || strings.Contains(owner.el.Desc, s)
	}
	return in(text) && in(desc)
}

// addressable reports whether a resource id names a node a script can
// address: present and not an obfuscated placeholder.
func addressable(id string) bool {
	return id != "" && !strings.HasSuffix(id, "resource_name_obfuscated")
}

// isControlClass reports whether a class is a control even when the
// source does not flag it clickable.
func isControlClass(class string) bool {
	s := shortClass(class)
	return strings.Contains(s, "Button") || strings.Contains(s, "CheckBox") || strings.Contains(s, "Switch") ||
		strings.HasSuffix(s, "EditText") || s == "TextField" || s == "SecureTextField" || s == "Chip"
}

// isXCUIChrome reports whether an iOS element is window furniture: the
// application and window elements, and scroll indicators.
func isXCUIChrome(class, text string) bool {
	switch class {
	case "XCUIElementTypeApplication", "XCUIElementTypeWindow":
		return true
	case "XCUIElementTypeOther":
		return strings.Contains(text, "scroll bar,")
	}
	return false
}

// isWrapper reports whether n is a bare layout node: no text, no flags.
func isWrapper(n *Node) bool {
	return len(n.Children) > 0 && n.Text == "" && n.Desc == "" && !n.Clickable && !n.LongClickable &&
		!n.Checkable && !n.Scrollable && !n.Editable
}

// isSystemBar reports whether n belongs to the status or navigation bar:
// system UI that says nothing about the app (clock, battery, signal,
// notification icons, back/home buttons).
func isSystemBar(n *Node, pkg string, r, screen Rect) bool {
	if n.Class == "XCUIElementTypeStatusBar" {
		return true
	}
	if pkg != systemUI {
		return false
	}
	id := strings.ToLower(n.ResourceID)
	for _, k := range []string{"status_bar", "statusbar", "navigation_bar", "navbar", "nav_bar", "notification_icon", "system_icon", "clock", "battery"} {
		if strings.Contains(id, k) {
			return true
		}
	}
	h := screen.Y1 - screen.Y0
	return r.Y1 <= screen.Y0+h*7/100 || r.Y0 >= screen.Y1-h*8/100
}

// foreground is the app most elements belong to, system UI and keyboards aside.
func foreground(cs []*cand) string {
	count := map[string]int{}
	best, bestN := "", 0
	for _, c := range cs {
		if c.pkg == "" || c.pkg == systemUI || isIME(c.pkg) || c.el.System {
			continue
		}
		count[c.pkg]++
		if count[c.pkg] > bestN {
			best, bestN = c.pkg, count[c.pkg]
		}
	}
	return best
}

// isIME reports whether an Android package is a soft keyboard (Gboard,
// AOSP, Samsung, SwiftKey, Sogou, iFlytek, Baidu, QQ pinyin…).
func isIME(pkg string) bool {
	for _, k := range []string{"inputmethod", "honeyboard", "swiftkey", "keyboard", "com.baidu.input", "qqpinyin"} {
		if strings.Contains(pkg, k) {
			return true
		}
	}
	return false
}

// appName is the name of the first XCUIElementTypeApplication.
func appName(root *Node) string {
	var name string
	root.Walk(func(n *Node) bool {
		if name != "" {
			return false
		}
		if n.Class == "XCUIElementTypeApplication" {
			name = strings.TrimSpace(n.Text)
			if name == "" {
				name = strings.TrimSpace(n.ResourceID)
			}
			return false
		}
		return true
	})
	return name
}

// clean collapses runs of white space (newlines included) into one space.
func clean(s string) string {
	if s == "" {
		return ""
	}
	simple := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c >= 0x80 || c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' ') {
			simple = false
			break
		}
	}
	if simple {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == 0 }), " ")
}

func contains(outer, inner Rect) bool {
	return inner.X0 >= outer.X0 && inner.Y0 >= outer.Y0 && inner.X1 <= outer.X1 && inner.Y1 <= outer.Y1
}

func intersect(a, b Rect) Rect {
	r := Rect{max(a.X0, b.X0), max(a.Y0, b.Y0), min(a.X1, b.X1), min(a.Y1, b.Y1)}
	if r.Empty() {
		return Rect{}
	}
	return r
}

func (r Rect) area() int {
	if r.Empty() {
		return 0
	}
	return (r.X1 - r.X0) * (r.Y1 - r.Y0)
}
