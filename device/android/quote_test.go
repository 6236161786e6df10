package android

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// FuzzQuote: every device command built from a name (pm install of an
// uploaded file, am start of a component, rm of the copy) goes through
// quote; a POSIX shell reads what quote makes as exactly one word, the
// name, whatever metacharacters it holds (b;touch${IFS}x;.apk).
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"b;touch${IFS}x;.apk", "a b", "it's", "$(reboot)", "`id`", "x\ny", "", "-rf", "*", "a\\b", "\"q\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if strings.ContainsRune(name, 0) || !utf8Valid(name) {
			return // not a name a shell command can carry
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader("printf '%s|' "+quote(name)), "")
		if err != nil {
			t.Fatalf("quote(%q) = %s does not parse: %v", name, quote(name), err)
		}
		var out bytes.Buffer
		r, err := interp.New(interp.StdIO(nil, &out, &out), interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) error {
				t.Fatalf("quote(%q) = %s ran a command: %q", name, quote(name), args)
				return nil
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Run(context.Background(), file); err != nil {
			t.Fatalf("quote(%q) = %s: %v", name, quote(name), err)
		}
		if got := out.String(); got != name+"|" {
			t.Errorf("quote(%q) = %s reads as %q", name, quote(name), got)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }
