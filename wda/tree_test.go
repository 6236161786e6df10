package wda

import (
	"os"
	"testing"
)

func TestParseTreeSample(t *testing.T) {
	data, err := os.ReadFile("testdata/ok/source-json.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeResponse("GET /source", 200, data)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := ParseTree(r.Value)
	if err != nil {
		t.Fatal(err)
	}
	cell := tree.Find(func(n *Node) bool { return n.Type == "Cell" })
	if tree.Type != "Application" || !bool(tree.Visible) || cell == nil || cell.Rect != (Rect{X: 16, Y: 100, Width: 358, Height: 44}) || *cell.Identifier != "com.apple.settings.wifi" {
		t.Fatalf("tree = %+v, cell = %+v", tree, cell)
	}
	if _, err := ParseTree([]byte(`{"isFocused":"maybe"}`)); err == nil {
		t.Error("a bad flag was accepted")
	}
}
