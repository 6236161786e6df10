package check

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/google/go-cmp/cmp"
)

func TestUnmarshal(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		in   string
		want Check
	}{
		{"model exist", `{"kind":"EXIST","target":"Results","value":""}`, Check{Kind: Exists, Target: p("Results")}},
		{"model not exist", `{"kind":"NOT_EXIST","target":"Sale"}`, Check{Kind: NotExists, Target: p("Sale")}},
		{"model text equals by id", `{"kind":"TEXT_EQUALS","target":"id:com.apex.shop:id/cart","value":"Cart (1)"}`,
			Check{Kind: TextEquals, Target: action.Locator{ID: "com.apex.shop:id/cart"}, Text: "Cart (1)"}},
		{"model text contains", `{"kind":"TEXT_CONTAINS","target":"Total","value":"$"}`, Check{Kind: TextContains, Target: p("Total"), Text: "$"}},
		{"model number as a string", `{"kind":"NUMERIC_GREATER","target":"Brightness","value":"60%"}`, Check{Kind: NumberGreater, Target: p("Brightness"), Number: 60}},
		{"model number as a number", `{"kind":"NUMERIC_LESS","target":"Cart","value":3}`, Check{Kind: NumberLess, Target: p("Cart"), Number: 3}},
		{"model text as a number", `{"kind":"TEXT_EQUALS","target":"Qty","value":2}`, Check{Kind: TextEquals, Target: p("Qty"), Text: "2"}},
		{"model layout", `{"kind":"LAYOUT_CHANGED","target":"","value":""}`, Check{Kind: LayoutChanged}},
		{"model checked", `{"kind":"NOT_CHECKED","target":"Wi-Fi"}`, Check{Kind: NotChecked, Target: p("Wi-Fi")}},
		{"model region", `{"kind":"REGION","regions":[{"name":"header","text":"Sign in","must_exist":true}]}`,
			Check{Kind: Region, Regions: []RegionText{{Name: "header", Text: "Sign in", MustExist: &yes}}}},
		{"script spelling", `{"kind":"textEquals","target":{"id":"total"},"text":"$5"}`, Check{Kind: TextEquals, Target: action.Locator{ID: "total"}, Text: "$5"}},
		{"script number", `{"kind":"numberGreater","target":"Score","number":10}`, Check{Kind: NumberGreater, Target: p("Score"), Number: 10}},
		{"count", `{"kind":"count","target":{"type":"button","text":"Buy"},"number":3}`, Check{Kind: Count, Target: action.Locator{Type: "button", Text: "Buy"}, Number: 3}},
		{"text wins over value", `{"kind":"textEquals","target":"a","text":"b","value":"c"}`, Check{Kind: TextEquals, Target: p("a"), Text: "b"}},
		{"other spellings", `{"kind":"not-checked","target":"x"}`, Check{Kind: NotChecked, Target: p("x")}},
		{"unknown kind kept as written", `{"kind":"SPARKLES","target":"x"}`, Check{Kind: "SPARKLES", Target: p("x")}},
		{"empty kind", `{"kind":""}`, Check{}},
		{"unknown fields ignored", `{"kind":"EXIST","target":"x","reason":"the model explains"}`, Check{Kind: Exists, Target: p("x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Check
			if err := json.Unmarshal([]byte(tt.in), &c); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, c); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
			// What a check writes, it reads back the same.
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			var back Check
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if d := cmp.Diff(c, back); d != "" {
				t.Fatalf("%s read back differently (-want +got):\n%s", b, d)
			}
		})
	}
}

func TestUnmarshalErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"number without one", `{"kind":"NUMERIC_GREATER","target":"x","value":"many"}`, `"many" holds none`},
		{"value of another type", `{"kind":"TEXT_EQUALS","target":"x","value":true}`, "a string or a number"},
		{"bad locator", `{"kind":"exists","target":{"index":-1}}`, "check target"},
		{"kind not a string", `{"kind":3}`, "check"},
		{"not an object", `"EXIST"`, "check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Check
			err := json.Unmarshal([]byte(tt.in), &c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one with %q", err, tt.want)
			}
		})
	}
}

func TestMarshal(t *testing.T) {
	c := Check{Kind: TextEquals, Target: action.Locator{ID: "total"}, Text: "$5"}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"textEquals","target":{"id":"total"},"text":"$5"}`; string(b) != want {
		t.Errorf("%s, want %s", b, want)
	}
	if b, _ := json.Marshal(Check{Kind: LayoutChanged}); string(b) != `{"kind":"layoutChanged"}` {
		t.Errorf("layout changed: %s", b)
	}
}

// FuzzUnmarshal feeds the decoder arbitrary JSON: it never panics, what it
// accepts encodes and decodes back the same, and Eval decides it (or says
// why not) without panicking.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"kind":"EXIST","target":"Results","value":""}`,
		`{"kind":"TEXT_EQUALS","target":"id:a","value":"b"}`,
		`{"kind":"NUMERIC_GREATER","target":"x","value":"1,200.5"}`,
		`{"kind":"count","target":{"text":"Buy","index":0},"number":2}`,
		`{"kind":"REGION","regions":[{"name":"top","text":"x","must_exist":false}]}`,
		`{"kind":"textContains","target":{"x":1,"y":2},"text":"a"}`,
		`{}`, `null`, `[]`, `{"kind":"layoutChanged","value":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Check
		if err := json.Unmarshal(data, &c); err != nil {
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("%+v does not encode: %v", c, err)
		}
		var back Check
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s does not decode: %v", b, err)
		}
		b2, _ := json.Marshal(back)
		if !bytes.Equal(b, b2) {
			t.Fatalf("round trip changed the check: %s → %s", b, b2)
		}
		_ = c.String()
		r := c.Eval(hand, hand)
		if c.Validate() != nil && (r.Pass || r.Evidence == "") {
			t.Fatalf("an invalid check passed or said nothing: %+v", r)
		}
	})
}
