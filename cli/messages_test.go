package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestMessagesNameRealCommands walks every string in the project's Go
// code (tests aside) and every README and docs page, and checks each
// `apex …` command line and each --flag they name against the command
// tree: a message that tells a person to run `apex actions`, or to pass
// a flag no command has, fails here.
func TestMessagesNameRealCommands(t *testing.T) {
	root := NewRoot(nil, nil)
	root.InitDefaultCompletionCmd() // cobra adds it only when the command line runs
	allFlags := map[string]bool{}
	walkCommands(root, func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		c.InitDefaultVersionFlag()
		c.Flags().VisitAll(func(f *pflag.Flag) { allFlags[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { allFlags[f.Name] = true })
	})
	texts := projectTexts(t, "..")
	if len(texts) < 500 {
		t.Fatalf("found only %d texts: is the walk looking at the project?", len(texts))
	}
	checked := 0
	for _, tx := range texts {
		for _, line := range strings.Split(tx.text, "\n") {
			for _, seg := range apexSegments(line) {
				checked++
				if msg := checkSegment(root, seg); msg != "" {
					t.Errorf("%s: %q: %s", tx.where, seg.text, msg)
				}
			}
			if !tx.goString || speaksOtherTools(tx.where) {
				continue
			}
			// A bare --flag in a message must be some command's flag.
			for _, m := range bareFlag.FindAllStringSubmatch(line, -1) {
				if name := m[1]; !allFlags[name] && !otherToolsFlags[name] {
					t.Errorf("%s: %q names --%s, which no apex command has", tx.where, line, name)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d apex command lines", checked)
	}
}

// otherToolsFlags are flags of other programs the messages quote.
var otherToolsFlags = map[string]bool{}

// speaksOtherTools tells the packages whose strings are other programs'
// command lines (adb shell's am and pm, tesseract), not apex's messages.
func speaksOtherTools(where string) bool {
	for _, dir := range []string{"sim", "ocr", "adb", "wda", filepath.Join("device", "android")} {
		if strings.HasPrefix(where, filepath.Join("..", dir)+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

var bareFlag = regexp.MustCompile(`(?:^|[\s(\x60'"])--([a-z][a-z0-9-]*)`)

type projectText struct {
	where    string
	text     string
	goString bool
}

// projectTexts are the string literals of the Go files under dir (not
// tests, not testdata) and the Markdown files of README.md and docs/.
func projectTexts(t *testing.T, dir string) []projectText {
	t.Helper()
	var out []projectText
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", ".git", ".cache", "apex-runs":
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						out = append(out, projectText{where: fset.Position(lit.Pos()).String(), text: s, goString: true})
					}
				}
				return true
			})
		case rel == "README.md" || (strings.HasPrefix(rel, "docs"+string(filepath.Separator)) && strings.HasSuffix(rel, ".md")):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out = append(out, projectText{where: rel, text: string(data)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// segment is a command line found in a text; prose marks one that may be
// the word apex in a sentence.
type segment struct {
	text    string
	prose   bool
	chained bool // followed by && (the next command waits for this one to end)
}

var apexWord = regexp.MustCompile(`apex[ \t]+[a-z-]`)

// apexSegments finds the command lines in line that start with the word
// apex (as `apex …`, ./apex or cmd/apex) and end where the command does:
// at a quote, a backtick, a pipe, &&, a semicolon, a closing parenthesis
// or a colon after a word.
func apexSegments(line string) []segment {
	var segs []segment
	for _, loc := range apexWord.FindAllStringIndex(line, -1) {
		if i := loc[0]; i > 0 {
			switch prev := line[i-1]; {
			case prev == '-' || prev == '_' || prev == '$' || prev == '.' && (i < 2 || line[i-2] != '/'):
				continue
			case prev >= 'a' && prev <= 'z', prev >= 'A' && prev <= 'Z', prev >= '0' && prev <= '9':
				continue
			}
		}
		// Prose ("newer than this apex understands") is not a command
		// line: one starts a line or follows a quote, a parenthesis or a
		// path.
		prose := loc[0] > 0 && !strings.ContainsRune("`'\"(/\t", rune(line[loc[0]-1])) && strings.TrimSpace(line[:loc[0]]) != ""
		rest := line[loc[0]:]
		end, chained := len(rest), false
		if j := strings.Index(rest, "&&"); j >= 0 {
			end, chained = j, true
		}
		for _, stop := range []string{"`", "'", "\"", "|", "&&", ";", ")", ": ", ", ", "#", "<", "“", "”", " or ", " and ", " in ", " (", " to "} {
			if j := strings.Index(rest, stop); j >= 0 && j < end {
				end, chained = j, false
			}
		}
		segs = append(segs, segment{text: strings.TrimRight(rest[:end], " .:,"), prose: prose, chained: chained})
	}
	return segs
}

// checkSegment checks one command line: its words name a command, and
// its flags are that command's. It says what is wrong, or "".
func checkSegment(root *cobra.Command, seg segment) string {
	words := strings.Fields(seg.text)[1:]
	cmd := root
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") {
			// A global flag before the command, with its value.
			name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if f := root.PersistentFlags().Lookup(name); cmd == root && f != nil {
				if f.Value.Type() != "bool" && !hasValue {
					i++
				}
				continue
			}
			break
		}
		sub := findSub(cmd, w)
		if sub == nil {
			if cmd == root && !seg.prose {
				return "apex has no command " + strconv.Quote(w)
			}
			break
		}
		cmd = sub
	}
	if cmd == root && seg.prose {
		return ""
	}
	if seg.chained && cmd.Annotations[annotBlocks] != "" {
		return cmd.CommandPath() + " serves until Ctrl-C, so what follows && never runs: say to run it in another terminal"
	}
	for _, w := range words {
		switch {
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			name = strings.TrimRight(name, ".,:…")
			if name == "" || strings.ContainsAny(name, "…[]{}") {
				continue
			}
			if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
				return cmd.CommandPath() + " has no flag --" + name
			}
		case len(w) == 2 && w[0] == '-' && w[1] != '-':
			if cmd.Flags().ShorthandLookup(w[1:]) == nil && cmd.InheritedFlags().ShorthandLookup(w[1:]) == nil {
				return cmd.CommandPath() + " has no flag " + w
			}
		}
	}
	return ""
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name || slices.Contains(s.Aliases, name) {
			return s
		}
	}
	return nil
}

func walkCommands(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, s := range c.Commands() {
		walkCommands(s, f)
	}
}
