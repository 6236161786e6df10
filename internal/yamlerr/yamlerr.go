// Package yamlerr says where a YAML document is broken. yaml.v3 reports a
// syntax error at the line where the enclosing block starts ("line 2: did
// not find expected key" for a step indented wrong on line 6); Locate
// finds the line where the document stops parsing, which is the one a
// person must fix.
package yamlerr

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/apexagent/apex/internal/lazy"
	"gopkg.in/yaml.v3"
)

// yamlLine is the line number and message yaml.v3 puts in a syntax error.
var yamlLine = lazy.Regexp(`^yaml: line (\d+): (.*)$`)

// Locate returns the line (1-based; 0 when unknown) to fix for err, a
// syntax error yaml.v3 gave for data, and the error's message without
// yaml's prefix and line.
//
// The line is the first one whose addition stops the document parsing:
// the lines before a broken line are (nearly always) a YAML document of
// their own. When no prefix fails, or the first failing prefix ends
// before the line yaml named, yaml's own line is kept.
func Locate(data []byte, err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var prefix []byte
	for i, l := range lines {
		prefix = append(prefix, l...)
		if i+1 < line {
			continue
		}
		var n yaml.Node
		if yaml.Unmarshal(prefix, &n) != nil {
			return i + 1, msg
		}
	}
	return line, msg
}
