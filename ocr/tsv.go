package ocr

import (
	"fmt"
	"image"
	"strconv"
	"strings"
)

// tsvColumns is Tesseract's TSV header; parseTSV checks it so a changed
// format fails loudly instead of producing shifted boxes.
var tsvColumns = []string{"level", "page_num", "block_num", "par_num", "line_num", "word_num",
	"left", "top", "width", "height", "conf", "text"}

// parseTSV reads Tesseract's TSV output into lines of words, grouping words
// by their page, block, paragraph and line numbers. Rows that are not words,
// words with a negative confidence and blank words are skipped.
func parseTSV(data []byte) ([]Line, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rows := strings.Split(text, "\n")
	if len(rows) == 0 || strings.TrimSpace(rows[0]) == "" {
		return nil, fmt.Errorf("ocr: tesseract tsv: empty output")
	}
	header := strings.Split(rows[0], "\t")
	if len(header) != len(tsvColumns) {
		return nil, fmt.Errorf("ocr: tesseract tsv: header has %d columns, want %d", len(header), len(tsvColumns))
	}
	for i, h := range header {
		if strings.TrimSpace(h) != tsvColumns[i] {
			return nil, fmt.Errorf("ocr: tesseract tsv: column %d is %q, want %q", i+1, h, tsvColumns[i])
		}
	}
	type lineKey struct{ page, block, par, line int }
	var (
		lines []Line
		cur   []Word
		key   lineKey
		have  bool
	)
	flush := func() {
		if len(cur) > 0 {
			lines = append(lines, NewLine(cur))
		}
		cur = nil
	}
	for n, row := range rows[1:] {
		if strings.TrimSpace(row) == "" {
			continue
		}
		f := strings.SplitN(row, "\t", len(tsvColumns))
		if len(f) < len(tsvColumns)-1 {
			return nil, fmt.Errorf("ocr: tesseract tsv: row %d has %d columns, want %d", n+2, len(f), len(tsvColumns))
		}
		var nums [10]int
		for i := range nums {
			v, err := strconv.Atoi(strings.TrimSpace(f[i]))
			if err != nil {
				return nil, fmt.Errorf("ocr: tesseract tsv: row %d column %s: %w", n+2, tsvColumns[i], err)
			}
			nums[i] = v
		}
		if nums[0] != 5 || len(f) < len(tsvColumns) {
			continue
		}
		conf, err := strconv.ParseFloat(strings.TrimSpace(f[10]), 64)
		if err != nil {
			return nil, fmt.Errorf("ocr: tesseract tsv: row %d column conf: %w", n+2, err)
		}
		word := strings.TrimSpace(f[11])
		if conf < 0 || word == "" || nums[8] <= 0 || nums[9] <= 0 {
			continue
		}
		k := lineKey{nums[1], nums[2], nums[3], nums[4]}
		if !have || k != key {
			flush()
			key, have = k, true
		}
		cur = append(cur, Word{
			Text:       word,
			Box:        image.Rect(nums[6], nums[7], nums[6]+nums[8], nums[7]+nums[9]),
			Confidence: min(conf/100, 1),
		})
	}
	flush()
	return lines, nil
}
