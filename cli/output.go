package cli

import (
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The output layer: every command writes its result on Out (one JSON
// document with --json) and what happens meanwhile — progress, notes,
// warnings — on Progress(). Nothing here ever cuts a message: a long line
// is wrapped on a terminal and left whole elsewhere, so an error always
// reaches the part that says what to do.

// PrintJSON writes v as indented JSON on Out.
func (e *Env) PrintJSON(v any) error {
	enc := json.NewEncoder(e.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Progress is where human progress goes: stdout when it is a terminal and
// --json is not given, stderr otherwise, so that stdout stays a document a
// program can read (the JSON, or a command's result lines).
func (e *Env) Progress() io.Writer {
	if e.JSON || !isTerminal(e.Out) {
		return e.Err
	}
	return e.Out
}

// isTerminal reports whether w is a character device (a terminal) that
// can show cursor movement (TERM is not "dumb").
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// termWidth is the width lines are wrapped to on a terminal: $COLUMNS, or
// 100.
func termWidth() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n >= 20 {
		return n
	}
	return 100
}

// indentLines puts indent before every line of s but the first, so a
// multi-line message stays under the line that introduced it. With width
// > 0 it also wraps each line at spaces to fit width columns (a word
// longer than the line stays whole). No character of s is dropped.
func indentLines(s, indent string, width int) string {
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteString("\n" + indent)
		}
		start := utf8.RuneCountInString(indent)
		if i == 0 {
			start = 0
		}
		col := start
		for j, word := range strings.Split(line, " ") {
			n := utf8.RuneCountInString(word)
			if j > 0 {
				if width > 0 && col+1+n > width && col > start {
					b.WriteString("\n" + indent)
					col = utf8.RuneCountInString(indent)
				} else {
					b.WriteByte(' ')
					col++
				}
			}
			b.WriteString(word)
			col += n
		}
	}
	return b.String()
}

// oneLine joins a multi-line message into one line for a table cell, where
// a line break would break the table: runs of spaces and breaks become one
// space, every word stays.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// truncateRunes shortens a name (never a message) to n runes.
func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
