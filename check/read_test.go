package check

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/scene"
)

// pixels is a TextReader over made-up pixels: what each element's region
// reads, and which elements it was asked about.
type pixels struct {
	text  map[string]string
	asked []string
}

func (px *pixels) RegionText(_ context.Context, el scene.Element) (string, error) {
	px.asked = append(px.asked, el.ID)
	t, ok := px.text[el.ID]
	if !ok {
		return "", errors.New("nothing legible")
	}
	return t, nil
}

func TestReadText(t *testing.T) {
	canvas := action.Locator{ID: "e9"}
	tests := []struct {
		name  string
		c     Check
		px    map[string]string
		asked string // the element read, "" for none
		pass  bool
		err   string
	}{
		{"a canvas's text is read", Check{Kind: TextContains, Target: canvas, Text: "Score 0"}, map[string]string{"e9": "Level one Score 0"}, "e9", true, ""},
		{"a canvas's number is read", Check{Kind: NumberLess, Target: canvas, Number: 1}, map[string]string{"e9": "Score 0"}, "e9", true, ""},
		{"an element with text is not read", Check{Kind: TextEquals, Target: p("Pay"), Text: "Pay"}, nil, "", true, ""},
		{"presence needs no pixels", Check{Kind: Exists, Target: canvas}, nil, "", true, ""},
		{"an absent element is not read", Check{Kind: TextEquals, Target: p("Refund"), Text: "x"}, nil, "", false, ""},
		{"unreadable pixels say so", Check{Kind: TextEquals, Target: canvas, Text: "x"}, map[string]string{}, "e9", false, "no text in the UI tree, and reading its pixels failed: nothing legible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			px := &pixels{text: tt.px}
			s, err := ReadText(context.Background(), tt.c, hand, px)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(px.asked, ","); got != tt.asked {
				t.Fatalf("read %q, want %q", got, tt.asked)
			}
			if tt.asked == "" && s != hand {
				t.Fatal("a screen with nothing to read was copied")
			}
			if r := tt.c.Eval(nil, s); r.Pass != tt.pass {
				t.Fatalf("%s on the read screen: %+v", tt.c, r)
			}
		})
	}
	if e, _ := hand.Element("e9"); e.Text != "" {
		t.Fatalf("reading changed the original screen: e9 reads %q", e.Text)
	}
	if s, err := ReadText(context.Background(), Check{Kind: TextEquals, Target: canvas}, hand, nil); s != hand || err != nil {
		t.Fatalf("no reader: %v, %v", s == hand, err)
	}
}
