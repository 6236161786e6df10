package scene

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusFiles returns the XML dumps of ../shared/corpus/{android,ios},
// found from the module root, or skips the test when the corpus is absent.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("corpus: no go.mod above the test directory")
		}
		dir = parent
	}
	corpus := filepath.Join(filepath.Dir(dir), "shared", "corpus")
	var files []string
	for _, sub := range []string{"android", "ios"} {
		m, _ := filepath.Glob(filepath.Join(corpus, sub, "*.xml"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skipf("corpus: no dumps in %s/{android,ios} (the shared corpus sits next to the checkout); skipping", corpus)
	}
	return files
}

func readCorpus(t testing.TB, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestCorpusParses(t *testing.T) {
	for _, f := range corpusFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data := readCorpus(t, f)
			tr, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			want := FormatUIAutomator
			if strings.Contains(f, string(filepath.Separator)+"ios"+string(filepath.Separator)) {
				want = FormatXCUITest
			}
			if tr.Format != want || tr.Width <= 0 || tr.Height <= 0 || tr.Nodes < 10 || tr.Bytes != len(data) {
				t.Fatalf("tree: format %s (want %s), %dx%d, %d nodes, %d bytes", tr.Format, want, tr.Width, tr.Height, tr.Nodes, tr.Bytes)
			}
			s := Build(tr, nil)
			if len(s.Elements) == 0 {
				t.Fatalf("no elements:\n%s", s.Text())
			}
			for _, e := range s.Elements {
				if !KnownType(e.Type) {
					t.Errorf("%s (class %s) has type %q, not one of %v", e.ID, e.Class, e.Type, Types)
				}
			}
			if m := leak(s.Text()); m != "" {
				t.Errorf("the text a model reads says %q, not the vocabulary:\n%s", m, s.Text())
			}
		})
	}
}

// TestCorpusBudgetAndInteractive checks, for every corpus dump and a range
// of budgets, that Text stays within the budget, that every visible
// interactive node of the raw tree is an element whenever nothing was
// dropped, and that drops follow the documented order otherwise.
func TestCorpusBudgetAndInteractive(t *testing.T) {
	for _, f := range corpusFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tr, err := Parse(readCorpus(t, f))
			if err != nil {
				t.Fatal(err)
			}
			full := Build(tr, &Options{Budget: 1 << 30})
			if full.Dropped != "" {
				t.Fatalf("unbounded budget dropped: %s", full.Dropped)
			}
			for _, want := range visibleInteractive(tr) {
				if !hasElement(full, want) {
					t.Errorf("visible interactive node %s %q at %v (byte %d) is not in the scene:\n%s",
						want.node.Class, want.node.Text, want.rect, want.node.Offset, full.Text())
				}
			}
			for _, budget := range []int{DefaultBudget, 2000, 800, 300, 60} {
				s := Build(tr, &Options{Budget: budget})
				text := s.Text()
				if len(text) > budget {
					t.Errorf("budget %d: Text is %d bytes", budget, len(text))
				}
				if s.Stats.BytesOut != len(text) || s.Stats.ElementsOut != len(s.Elements) {
					t.Errorf("budget %d: stats %+v disagree with %d bytes, %d elements", budget, s.Stats, len(text), len(s.Elements))
				}
				if s.Dropped == "" {
					if len(s.Elements) != len(full.Elements) {
						t.Errorf("budget %d: %d elements, unbounded has %d, nothing reported dropped", budget, len(s.Elements), len(full.Elements))
					}
					continue
				}
				checkDropOrder(t, budget, full, s)
			}
		})
	}
}

// tierOf mirrors the documented drop order: system-bar text, other text
// and images, system-bar controls, controls.
func tierOf(e *Element) int {
	switch {
	case e.System && !e.Control():
		return 0
	case !e.Control():
		return 1
	case e.System:
		return 2
	}
	return 3
}

// checkDropOrder verifies that what s dropped from full went lowest tier
// first and, within the tier cut last, from the bottom up.
func checkDropOrder(t *testing.T, budget int, full, s *Scene) {
	t.Helper()
	kept := map[string]int{}
	for _, e := range s.Elements {
		if e.Part == "" { // parts go with their rows and take no line
			kept[elementKey(&e)]++
		}
	}
	minKeptTier, maxDroppedTier := 4, -1
	lastKeptIndex := map[int]int{}
	firstDroppedIndex := map[int]int{}
	for i := range full.Elements {
		e := &full.Elements[i]
		if e.Part != "" {
			continue
		}
		k, tier := elementKey(e), tierOf(e)
		if kept[k] > 0 {
			kept[k]--
			minKeptTier = min(minKeptTier, tier)
			lastKeptIndex[tier] = i
			continue
		}
		maxDroppedTier = max(maxDroppedTier, tier)
		if _, ok := firstDroppedIndex[tier]; !ok {
			firstDroppedIndex[tier] = i
		}
	}
	if maxDroppedTier < 0 {
		t.Errorf("budget %d: Dropped=%q but every element is kept", budget, s.Dropped)
		return
	}
	if minKeptTier < maxDroppedTier {
		t.Errorf("budget %d: kept a tier-%d element while dropping a tier-%d one (%s)", budget, minKeptTier, maxDroppedTier, s.Dropped)
	}
	if first, ok := firstDroppedIndex[maxDroppedTier]; ok {
		if last, ok := lastKeptIndex[maxDroppedTier]; ok && last > first {
			t.Errorf("budget %d: in tier %d kept element %d below dropped element %d", budget, maxDroppedTier, last, first)
		}
	}
	if len(s.Elements) > 0 && !strings.HasPrefix(s.Dropped, "dropped ") {
		t.Errorf("budget %d: Dropped = %q", budget, s.Dropped)
	}
}

func elementKey(e *Element) string {
	return e.Type + "|" + e.Text + "|" + e.Desc + "|" + e.ResourceID + "|" + rectString(e.Bounds)
}

func rectString(r Rect) string {
	return itoa(r.X0) + "," + itoa(r.Y0) + "," + itoa(r.X1) + "," + itoa(r.Y1)
}

type rawInteractive struct {
	node *Node
	rect Rect
	web  bool
}

// visibleInteractive lists the raw tree's interactive nodes that are
// plainly visible: every ancestor visible, and the node's bounds inside
// the screen and every sized ancestor's bounds with area left. It is
// written independently of Build, on purpose more strictly.
func visibleInteractive(tr *Tree) []rawInteractive {
	var out []rawInteractive
	screen := Rect{0, 0, tr.Width, tr.Height}
	var walk func(n *Node, clip Rect, web, root bool)
	walk = func(n *Node, clip Rect, web, root bool) {
		if !n.Visible {
			return
		}
		r := clip
		if n.HasBounds() && !root {
			r = intersect(n.Bounds, clip)
			if r.Empty() {
				return
			}
			if n.Clickable || n.LongClickable || n.Checkable || n.Scrollable || n.Editable {
				out = append(out, rawInteractive{node: n, rect: r, web: web})
			}
		}
		web = web || strings.Contains(n.Class, "WebView")
		for _, c := range n.Children {
			walk(c, r, web, false)
		}
	}
	walk(tr.Root, screen, false, true)
	return out
}

// hasElement reports whether the scene holds an element for the raw node:
// same visible rectangle (a web page's boxes may show larger, since only
// the web view clips them) and at least the node's flags.
func hasElement(s *Scene, want rawInteractive) bool {
	n := want.node
	for _, e := range s.Elements {
		same := e.Bounds == want.rect || want.web && contains(e.Bounds, want.rect)
		if !same {
			continue
		}
		f := e.Flags
		if (!n.Clickable || f.Clickable) && (!n.LongClickable || f.LongClickable) && (!n.Checkable || f.Checkable) &&
			(!n.Scrollable || f.Scrollable) && (!n.Editable || f.Editable) {
			return true
		}
	}
	return false
}
