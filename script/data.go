package script

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Data are the rows a script runs once for each: a CSV file whose first
// line names the columns, or data: rows in the script. Each column is a
// value the script's text uses as ${column}.
type Data struct {
	File    string // the CSV file; "" for rows written in the script
	Columns []string
	Rows    []Row
}

// Row is one row of data: its values by column, and where it comes from.
type Row struct {
	Values map[string]string
	// Line is the row's line in its file (2 for the first row of a CSV).
	Line int
}

// maxRows bounds the rows of one data set: each is a run.
const maxRows = 10000

// ReadData reads a CSV file of rows: a header naming the columns, then
// one line per run.
func ReadData(path string) (*Data, error) {
	raw, err := readRegular(path, 64<<20)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	r := csv.NewReader(bytes.NewReader(raw))
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("data %s: the file is empty: write a header line naming the columns, then one line per run", path)
		}
		return nil, fmt.Errorf("data %s: %w", path, err)
	}
	d := &Data{File: path}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if !validEnvName(h) {
			return nil, fmt.Errorf("data %s:1: column %d is named %q; a column is used as ${name}: letters, digits and _ (not first)", path, i+1, h)
		}
		d.Columns = append(d.Columns, h)
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("data %s: %w (every line has one field per column; quote fields holding commas)", path, err)
		}
		if len(d.Rows) == maxRows {
			return nil, fmt.Errorf("data %s: more than %d rows; split the file", path, maxRows)
		}
		line, _ := r.FieldPos(0)
		row := Row{Values: map[string]string{}, Line: line}
		for i, c := range d.Columns {
			row.Values[c] = rec[i]
		}
		d.Rows = append(d.Rows, row)
	}
	if len(d.Rows) == 0 {
		return nil, fmt.Errorf("data %s: no rows below the header: add one line per run", path)
	}
	return d, nil
}

// data reads data: rows.csv (relative to the script) or data: [{col: v}, …].
// Its columns become values of the script.
func (l *loader) data(n *yaml.Node) *Data {
	var d *Data
	switch n.Kind {
	case yaml.ScalarNode:
		path := l.str(n, "data")
		if path == "" {
			return nil
		}
		if !l.opts.Files {
			l.errorf(n, "data: this script may not read files (it did not come from one); write the rows in it: data: [{column: value}]")
			return nil
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(l.file), path)
		}
		var err error
		if d, err = ReadData(path); err != nil {
			l.errorf(n, "%v", err)
			return nil
		}
	case yaml.SequenceNode:
		d = &Data{}
		seen := map[string]bool{}
		for _, rn := range n.Content {
			row := Row{Values: map[string]string{}, Line: rn.Line}
			for _, p := range l.pairs(rn, "data row") {
				if !validEnvName(p.key.Value) {
					l.errorf(p.key, "data: column %q cannot be used as ${%s}: use letters, digits and _", p.key.Value, p.key.Value)
				}
				row.Values[p.key.Value] = l.optStr(p.val, "data."+p.key.Value)
				if !seen[p.key.Value] {
					seen[p.key.Value] = true
					d.Columns = append(d.Columns, p.key.Value)
				}
			}
			d.Rows = append(d.Rows, row)
		}
		for _, r := range d.Rows {
			for _, c := range d.Columns {
				if _, ok := r.Values[c]; !ok {
					l.errorf(n, "data: the row at line %d has no %s; give every row every column", r.Line, c)
				}
			}
		}
		if len(d.Rows) == 0 {
			l.errorf(n, "data: the list is empty; add one row per run ({column: value})")
		}
	default:
		l.errorf(n, "data: expected a CSV file (data: rows.csv) or a list of rows, got %s", describe(n))
		return nil
	}
	for _, c := range d.Columns {
		l.vars.set[c] = true
	}
	return d
}

// optStr is str that accepts an empty value.
func (l *loader) optStr(n *yaml.Node, what string) string {
	if isNull(n) {
		return ""
	}
	return l.str(n, what)
}
