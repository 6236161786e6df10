package scene

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Longest text and description Text shows of one element, in runes; the
// Element keeps them whole.
const (
	maxTextRunes = 100
	maxDescRunes = 60
	// maxPartRunes bounds each text a container absorbs from inside it,
	// so a long title does not hide the price after it.
	maxPartRunes = 48
)

// Text is the compact form a model reads: a header line with the screen
// size and app, then one line per element, e.g.
//
//	screen 1080x2400 app=com.apex.shop
//	e3 button "Add to cart" id=add_to_cart [540,1200] disabled
//	e4 list id=results [540,1300] scrollable (+12 items below)
//
// The bracketed point is the element's centre, where a tap lands. A last
// line says what the budget dropped, if anything. The result never
// exceeds the Scene's budget.
func (s *Scene) Text() string {
	var b strings.Builder
	b.Grow(s.textLen())
	s.header(&b)
	for i := range s.Elements {
		if s.Elements[i].Part != "" {
			continue
		}
		s.Elements[i].line(&b)
		b.WriteByte('\n')
	}
	if s.Dropped != "" {
		b.WriteString(s.Dropped)
		b.WriteByte('\n')
	}
	out := b.String()
	budget := s.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	if len(out) > budget {
		// Only a Scene edited after Build gets here: cut at a line end.
		out = out[:budget]
		if i := strings.LastIndexByte(out, '\n'); i >= 0 {
			out = out[:i+1]
		} else {
			out = truncBytes(out, budget)
		}
	}
	return out
}

func (s *Scene) textLen() int {
	n := 64 + len(s.Dropped)
	for i := range s.Elements {
		n += 48 + len(s.Elements[i].Text) + len(s.Elements[i].Desc)
	}
	return n
}

func (s *Scene) header(b *strings.Builder) {
	b.WriteString("screen ")
	b.WriteString(strconv.Itoa(s.Width))
	b.WriteByte('x')
	b.WriteString(strconv.Itoa(s.Height))
	if s.Format == FormatXCUITest {
		b.WriteString("pt")
	}
	if s.Package != "" {
		b.WriteString(" app=")
		b.WriteString(s.Package)
	}
	if s.Keyboard {
		b.WriteString(" keyboard")
	}
	if s.Empty {
		b.WriteString(" empty (no app elements in the UI tree)")
	}
	b.WriteByte('\n')
}

// Line is the element's line of Text, without a newline: the one form in
// which an element is shown to a model (MCP's diffs show elements by it).
func (e *Element) Line() string {
	var b strings.Builder
	e.line(&b)
	return b.String()
}

// line writes the element without a trailing newline.
func (e *Element) line(b *strings.Builder) {
	b.WriteString(e.ID)
	b.WriteByte(' ')
	b.WriteString(e.Type)
	if e.Text != "" {
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(truncRunes(e.Text, maxTextRunes)))
	}
	if e.Desc != "" {
		b.WriteString(" desc=")
		b.WriteString(strconv.Quote(truncRunes(e.Desc, maxDescRunes)))
	}
	if id := shortID(e.ResourceID); id != "" {
		b.WriteString(" id=")
		b.WriteString(id)
	}
	x, y := e.Bounds.Center()
	b.WriteString(" [")
	b.WriteString(strconv.Itoa(x))
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(y))
	b.WriteByte(']')
	f := e.Flags
	flag := func(on bool, name string) {
		if on {
			b.WriteByte(' ')
			b.WriteString(name)
		}
	}
	flag(f.Clickable && readOnly(e.Type), "clickable")
	flag(f.LongClickable && !f.Clickable, "long-press")
	flag(f.Checkable && f.Checked, "checked")
	flag(f.Checkable && !f.Checked, "unchecked")
	flag(f.Checked && !f.Checkable, "checked")
	flag(f.Editable && e.Type != TypeInput, "editable")
	flag(f.Scrollable, "scrollable")
	flag(f.Selected, "selected")
	flag(f.Focused, "focused")
	flag(f.Password, "password")
	flag(f.Disabled && e.Control(), "disabled")
	flag(e.System, "system")
	flag(e.Source == SourceOCR, "ocr") // read from pixels: the tree does not have it
	if e.Note != "" {
		b.WriteString(" (")
		b.WriteString(e.Note)
		b.WriteByte(')')
	}
}

// Control reports whether the element is something a person acts on —
// flagged clickable, checkable, editable, scrollable or long-clickable,
// or a control such as a button that the source marks disabled and not
// clickable.
func (e *Element) Control() bool {
	if e.Flags.Interactive() {
		return true
	}
	return !readOnly(e.Type) && e.Flags.Disabled
}

// shortID drops the "package:id/" prefix of an Android resource id.
func shortID(id string) string {
	if i := strings.Index(id, ":id/"); i >= 0 {
		return id[i+4:]
	}
	if strings.ContainsAny(id, " \t\n\"") {
		return strconv.Quote(truncRunes(id, maxDescRunes))
	}
	return id
}

func truncRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	if i >= len(s) {
		return s
	}
	return s[:i] + "…"
}

func truncBytes(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func itoa(n int) string { return strconv.Itoa(n) }

// fit gives the kept candidates ids and drops, lowest tier first and
// bottom-up within a tier, until Text fits the budget.
func fit(s *Scene, kept []*cand) {
	var hb strings.Builder
	s.header(&hb)
	idWidth := len(itoa(len(kept))) + 1
	lens := make([]int, len(kept))
	total := hb.Len()
	var lb strings.Builder
	for i, c := range kept {
		lb.Reset()
		c.el.line(&lb)
		lens[i] = lb.Len() + idWidth + 1 // the line holds an empty id; +1 for the newline
		total += lens[i]
	}
	dropped := make([]bool, len(kept))
	if total > s.Budget {
		order := make([]int, len(kept))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool {
			ca, cb := kept[order[a]], kept[order[b]]
			if ca.tier != cb.tier {
				return ca.tier < cb.tier
			}
			return order[a] > order[b] // bottom of the screen first
		})
		counts := map[string]int{}
		n := 0
		for _, i := range order {
			if total+len(droppedLine(counts, n, s.Budget))+1 <= s.Budget {
				break
			}
			dropped[i] = true
			total -= lens[i]
			counts[kindOf(kept[i])]++
			n++
		}
		s.Dropped = droppedLine(counts, n, s.Budget)
	}
	s.Elements = make([]Element, 0, len(kept))
	var parts []Element
	for i, c := range kept {
		if dropped[i] {
			continue
		}
		c.el.ID = "e" + itoa(len(s.Elements)+1)
		s.Elements = append(s.Elements, c.el)
		for j, p := range c.inner {
			p.ID, p.Part = c.el.ID+"."+itoa(j+1), c.el.ID
			parts = append(parts, p)
		}
	}
	// Parts follow the elements a model reads, so e1…eN stay the lines of Text.
	s.Elements = append(s.Elements, parts...)
}

func kindOf(c *cand) string {
	if c.el.System {
		return "system-bar"
	}
	return c.el.Type
}

// droppedLine summarises what the budget cut, most common kind first.
func droppedLine(counts map[string]int, n, budget int) string {
	if n == 0 {
		return ""
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	b.WriteString("dropped ")
	b.WriteString(itoa(n))
	b.WriteString(" elements to fit ")
	b.WriteString(itoa(budget))
	b.WriteString(" bytes:")
	for i, k := range kinds {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte(' ')
		b.WriteString(itoa(counts[k]))
		b.WriteByte(' ')
		b.WriteString(k)
	}
	return b.String()
}
