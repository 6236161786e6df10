package ocr

import (
	"image"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const tsvHeader = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"

func TestParseTSV(t *testing.T) {
	out := tsvHeader +
		"1\t1\t0\t0\t0\t0\t0\t0\t1080\t2400\t-1\t\n" +
		"4\t1\t1\t1\t1\t0\t40\t50\t300\t40\t-1\t\n" +
		"5\t1\t1\t1\t1\t1\t40\t50\t100\t40\t96.5\tHello\n" +
		"5\t1\t1\t1\t1\t2\t150\t52\t190\t38\t90\tworld\n" +
		"5\t1\t1\t1\t1\t3\t350\t52\t10\t38\t-1\t \n" +
		"5\t1\t2\t1\t1\t1\t40\t200\t60\t60\t80\t设\n" +
		"5\t1\t2\t1\t1\t2\t100\t200\t60\t60\t70\t置\n"
	lines, err := parseTSV([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Line{
		NewLine([]Word{
			{Text: "Hello", Box: image.Rect(40, 50, 140, 90), Confidence: 0.965},
			{Text: "world", Box: image.Rect(150, 52, 340, 90), Confidence: 0.9},
		}),
		NewLine([]Word{
			{Text: "设", Box: image.Rect(40, 200, 100, 260), Confidence: 0.8},
			{Text: "置", Box: image.Rect(100, 200, 160, 260), Confidence: 0.7},
		}),
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("parseTSV (-want +got):\n%s", diff)
	}
	if lines[0].Text != "Hello world" || lines[1].Text != "设置" {
		t.Errorf("line texts %q, %q; want %q, %q", lines[0].Text, lines[1].Text, "Hello world", "设置")
	}
	if lines[0].Box != image.Rect(40, 50, 340, 90) {
		t.Errorf("line box %v, want the union of its words", lines[0].Box)
	}
}

func TestParseTSVErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":          "",
		"wrong header":   "a\tb\n",
		"renamed column": strings.Replace(tsvHeader, "conf", "confidence", 1),
		"short row":      tsvHeader + "5\t1\t1\n",
		"bad number":     tsvHeader + "5\t1\t1\t1\t1\t1\tx\t50\t100\t40\t96\tHello\n",
		"bad confidence": tsvHeader + "5\t1\t1\t1\t1\t1\t40\t50\t100\t40\thigh\tHello\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parseTSV([]byte(in)); err == nil || !strings.HasPrefix(err.Error(), "ocr: tesseract tsv:") {
				t.Errorf("err %v, want an ocr: tesseract tsv error", err)
			}
		})
	}
}

func FuzzParseTSV(f *testing.F) {
	f.Add([]byte(tsvHeader + "5\t1\t1\t1\t1\t1\t40\t50\t100\t40\t96.5\tHello\n"))
	f.Add([]byte(tsvHeader + "1\t1\t0\t0\t0\t0\t0\t0\t8\t8\t-1\t\n"))
	f.Add([]byte("level\tpage_num\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := parseTSV(data)
		if err != nil {
			return
		}
		for _, l := range lines {
			if len(l.Words) == 0 {
				t.Fatalf("line %q without words", l.Text)
			}
			for _, w := range l.Words {
				if w.Text == "" || w.Box.Empty() || w.Confidence < 0 || w.Confidence > 1 {
					t.Fatalf("bad word %+v", w)
				}
				if !w.Box.In(l.Box) {
					t.Fatalf("word %v outside line box %v", w.Box, l.Box)
				}
			}
		}
	})
}
