package script

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRunFlowLoadsFilesRelativeToTheCaller(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"suite/main.yaml":        "tasks:\n  - name: a\n    flow:\n      - runFlow: {file: flows/login.yaml, with: {user: demo}}\n      - input: {id: x}\n        value: ${token}\n      - runFlow: flows/login.yaml\n        with: {user: other}\n",
		"suite/flows/login.yaml": "params: {user: null, password: apex123}\ntasks:\n  - name: sign in\n    flow:\n      - runFlow: ../common/tap.yaml\n      - input: {id: username}\n        value: ${user}\n      - read: {locate: {id: token}, as: token}\n",
		"suite/common/tap.yaml":  "tasks:\n  - name: tap\n    flow:\n      - tap: Sign in\n",
	})
	s, err := LoadFile(filepath.Join(dir, "suite/main.yaml"), &Options{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	steps := s.Tasks[0].Steps
	f := steps[0].Flow
	if f == nil || f.Name != "login" || f != steps[2].Flow {
		t.Fatalf("flow = %+v; want login, read once for both calls", f)
	}
	if d := cmp.Diff([]Param{{Name: "user", Required: true}, {Name: "password", Value: "apex123"}}, f.Params); d != "" {
		t.Errorf("params (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Param{{Name: "user", Value: "demo"}}, steps[0].With); d != "" {
		t.Errorf("with (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"token"}, f.Stores); d != "" {
		t.Errorf("stores (-want +got):\n%s", d)
	}
	inner := f.Tasks[0].Steps[0].Flow
	if inner == nil || inner.Tasks[0].Steps[0].Kind != Tap || inner.Tasks[0].Steps[0].Pos.File != filepath.Join(dir, "suite/flows/../common/tap.yaml") {
		t.Fatalf("nested flow = %+v", inner)
	}
	if steps[1].Value != "${token}" {
		t.Errorf("a stored value is put in when the step runs: value = %q", steps[1].Value)
	}
}

func TestControlSteps(t *testing.T) {
	src := `tasks:
  - name: a
    flow:
      - if: {visible: Sale, timeout: 1500}
        flow:
          - tap: {desc: Close}
        else:
          - back
      - if: {platform: ios}
        flow: [home]
      - if: {textEquals: "3", element: {id: qty}}
        flow: [back]
      - repeat: {times: 3}
        flow: [back]
      - repeat: {until: {notVisible: Spinner}, max: 10}
        flow: [back]
      - runFlow:
          name: close
          with: {what: Close}
          flow:
            - tap: ${what}
`
	s, err := Load([]byte(src), "x.yaml", &Options{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	st := s.Tasks[0].Steps
	checks := []struct {
		name      string
		got, want any
	}{
		{"if visible", *st[0].Cond.Assert, Assert{Op: "exists"}},
		{"if target", string(st[0].Cond.Target), `"Sale"`},
		{"if timeout", st[0].Cond.Timeout.String(), "1.5s"},
		{"then", st[0].Body[0].Kind, Tap},
		{"else", st[0].Else[0].Kind, Back},
		{"platform", st[1].Cond.Platform, "ios"},
		{"any check", *st[2].Cond.Assert, Assert{Op: "textEquals", Text: "3"}},
		{"times", st[3].Times, 3},
		{"until", st[4].Cond.Assert.Op + " " + string(st[4].Cond.Target), `notExists "Spinner"`},
		{"max", st[4].Max, 10},
		{"inline flow", st[5].Flow.Name + " " + string(st[5].Flow.Tasks[0].Steps[0].Target), `close "${what}"`},
	}
	for _, c := range checks {
		if d := cmp.Diff(c.want, c.got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

func TestBadConstructsFailAtLoad(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"a.yaml":    "tasks:\n  - name: a\n    flow:\n      - runFlow: b.yaml\n",
		"b.yaml":    "tasks:\n  - name: b\n    flow:\n      - runFlow: c.yaml\n",
		"c.yaml":    "tasks:\n  - name: c\n    flow:\n      - runFlow: a.yaml\n",
		"self.yaml": "tasks:\n  - name: s\n    flow:\n      - runFlow: self.yaml\n",
		"need.yaml": "params: [user]\ntasks:\n  - name: n\n    flow:\n      - input: {id: u}\n        value: ${user}\n",
		"tgt.yaml":  "android: {}\ntasks:\n  - name: n\n    flow: [back]\n",
	})
	flow := "tasks:\n  - name: a\n    flow:\n"
	cases := []struct{ name, file, src, want string }{
		{"cycle names the chain", "a.yaml", "", "c.yaml:4:18: runFlow cycle: a.yaml → b.yaml → c.yaml → a.yaml"},
		{"self cycle", "self.yaml", "", "self.yaml:4:18: runFlow cycle: self.yaml → self.yaml"},
		{"missing flow file", "", flow + "      - runFlow: nope.yaml\n", "x.yaml:4:18: runFlow: cannot read"},
		{"flow param missing", "", flow + "      - runFlow: need.yaml\n", "x.yaml:4:9: runFlow: need needs user: add with: {user: …}"},
		{"flow param unknown", "", flow + "      - runFlow: {file: need.yaml, with: {user: a, pass: b}}\n", `runFlow: need takes no parameter "pass": it takes user`},
		{"flow with a target", "", flow + "      - runFlow: tgt.yaml\n", "tgt.yaml:1:1: a flow runs on its caller's device: remove the android: block"},
		{"unknown value", "", flow + "      - input: {id: a}\n        value: ${total}\n", "x.yaml:5:16: unknown value ${total}: store it before this step"},
		{"value before it is stored", "", flow + "      - tap: ${total}\n      - read: {locate: {id: t}, as: total}\n", "x.yaml:4:14: unknown value ${total}"},
		{"value in a number", "", flow + "      - read: {locate: {id: t}, as: n}\n      - sleep: ${n}\n", "x.yaml:5:16: ${n} is a value set while the script runs; it cannot be used here"},
		{"repeat until without max", "", flow + "      - repeat: {until: {visible: Done}}\n        flow: [back]\n", "x.yaml:4:25: repeat: until needs max: N"},
		{"repeat times and until", "", flow + "      - repeat: {times: 2, until: {visible: x}, max: 3}\n        flow: [back]\n", "repeat: times: and until: do not go together"},
		{"repeat no count", "", flow + "      - repeat: {}\n        flow: [back]\n", "x.yaml:4:17: repeat: say how often"},
		{"repeat no flow", "", flow + "      - repeat: {times: 2}\n", "x.yaml:4:9: repeat: add flow: with the steps to run"},
		{"unknown condition", "", flow + "      - if: {shows: Sale}\n        flow: [back]\n", `x.yaml:4:14: unknown condition "shows" in if: write visible: <target>, notVisible: <target>, platform: android|ios`},
		{"condition not a mapping", "", flow + "      - if: Sale\n        flow: [back]\n", "x.yaml:4:13: if: expected a mapping"},
		{"bad platform", "", flow + "      - if: {platform: windows}\n        flow: [back]\n", "if.platform: expected android or ios"},
		{"two conditions", "", flow + "      - if: {visible: a, notVisible: b}\n        flow: [back]\n", "if: one check per step, found 2"},
		{"read without as", "", flow + "      - read: {locate: {id: t}}\n", "x.yaml:4:9: read: add as: <name>"},
		{"undeclared env", "", flow + "      - launch: ${HOME}\n", "x.yaml:4:17: environment variable HOME is not declared: add env: [HOME]"},
		{"model key never", "", "env: [APEX_MODEL_API_KEY]\n" + flow + "      - launch: x\n", "x.yaml:1:7: env: APEX_MODEL_API_KEY holds a model setting or key"},
		{"a key by its suffix", "", flow + "      - launch: ${APEX_VAR_OPENAI_API_KEY}\n", "model settings and keys are never put into scripts"},
		{"standalone required param", "", "params: [user]\n" + flow + "      - back\n", "x.yaml:1:10: params: user has no default"},
		{"no files from a client", "client", flow + "      - runFlow: a.yaml\n", "x.yaml:4:18: runFlow: this script may not read files"},
		{"no data files from a client", "client", "data: /etc/passwd\n" + flow + "      - back\n", "x.yaml:1:7: data: this script may not read files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			lookup := env(map[string]string{"HOME": "/root", "APEX_VAR_OPENAI_API_KEY": "sk"})
			switch c.file {
			case "client":
				_, err = Load([]byte(c.src), "x.yaml", &Options{LookupEnv: lookup})
			case "":
				_, err = Load([]byte(c.src), filepath.Join(dir, "x.yaml"), &Options{LookupEnv: lookup, Files: true})
			default:
				_, err = LoadFile(filepath.Join(dir, c.file), &Options{LookupEnv: lookup})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, c.want)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("err %T is not a *script.Error", err)
			}
		})
	}
}

func TestInterpolationRules(t *testing.T) {
	src := `env: [SHOP_USER]
params: {greeting: hi}
tasks:
  - name: a
    flow:
      - input: {id: a}
        value: "$${SHOP_USER} is ${SHOP_USER}, ${APEX_VAR_CITY}, ${UNSET:-fallback}, ${greeting}"
      - input: {id: b}
        value: ${APEX_VAR_TRICK}
      - read: {locate: {id: t}, as: total}
      - tap: {text: "${total}"}
      - tap: "$${total}"
`
	vars := map[string]string{"SHOP_USER": "ann", "APEX_VAR_CITY": "Paris", "APEX_VAR_TRICK": "${greeting}"}
	s, err := Load([]byte(src), "x.yaml", &Options{LookupEnv: env(vars)})
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"greeting": "hello", "total": `$5 "net"`}
	lookup := func(n string) (string, bool) { v, ok := values[n]; return v, ok }
	var got []string
	for _, st := range s.Tasks[0].Steps {
		x, err := st.Expand(lookup)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, x.Value+string(x.Target))
	}
	want := []string{
		`${SHOP_USER} is ann, Paris, fallback, hello{"id":"a"}`,
		`${greeting}{"id":"b"}`, // an environment value is text, never a reference
		`{"id":"t"}`,
		`{"text":"$5 \"net\""}`,
		`"${total}"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("expanded (-want +got):\n%s", d)
	}
	if _, err := s.Tasks[0].Steps[3].Expand(func(string) (string, bool) { return "", false }); err == nil || !strings.Contains(err.Error(), "x.yaml:11:9: value total is not set") {
		t.Errorf("an unset value: %v", err)
	}
	// A step built in Go (the playground's) means its text as it is.
	built := Step{Kind: Input, Value: "${HOME} $${x}", Params: []byte(`{"value":"${total}"}`)}
	if x, err := built.Expand(lookup); err != nil || x.Value != built.Value || string(x.Params) != string(built.Params) {
		t.Errorf("a step built in Go was expanded: %+v %v", x, err)
	}
}

func TestDataRows(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"rows.csv": "user,city\nann,Paris\n\"bob, jr\",London\n",
		"s.yaml":   "data: rows.csv\ntags: [smoke, data]\ntasks:\n  - name: a\n    flow:\n      - input: {id: u}\n        value: ${user} from ${city}\n",
	})
	s, err := LoadFile(filepath.Join(dir, "s.yaml"), &Options{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"user", "city"}, s.Data.Columns); d != "" {
		t.Errorf("columns (-want +got):\n%s", d)
	}
	if len(s.Data.Rows) != 2 || s.Data.Rows[1].Values["user"] != "bob, jr" || s.Data.Rows[1].Line != 3 {
		t.Errorf("rows = %+v", s.Data.Rows)
	}
	if d := cmp.Diff([]string{"smoke", "data"}, s.Tags); d != "" {
		t.Errorf("tags (-want +got):\n%s", d)
	}
	// Columns given from outside (apex run --data) are values too.
	src := []byte("tasks:\n  - name: a\n    flow:\n      - tap: ${user}\n")
	if _, err := Load(src, "x.yaml", &Options{LookupEnv: env(nil)}); err == nil {
		t.Error("a column nobody gives loads")
	}
	if _, err := Load(src, "x.yaml", &Options{LookupEnv: env(nil), Values: []string{"user"}}); err != nil {
		t.Error(err)
	}
	inline := "data:\n  - {user: ann}\n  - {city: x}\ntasks:\n  - name: a\n    flow: [back]\n"
	if _, err := Load([]byte(inline), "x.yaml", nil); err == nil || !strings.Contains(err.Error(), "x.yaml:2:3: data: the row at line 2 has no city") {
		t.Errorf("ragged rows: %v", err)
	}
	for _, bad := range []struct{ csv, want string }{
		{"", "the file is empty"},
		{"a b,c\n1,2\n", `column 1 is named "a b"`},
		{"a,b\n", "no rows below the header"},
		{"a,b\n1\n", "wrong number of fields"},
	} {
		p := filepath.Join(dir, "bad.csv")
		os.WriteFile(p, []byte(bad.csv), 0o644)
		if _, err := ReadData(p); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.csv, err, bad.want)
		}
	}
}

// FuzzEscape: text escaped as the recorder writes it ($${ for ${) reads
// back as itself, whatever it holds, and refers to nothing.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"${HOME}", "$${x}", "${unclosed", "a$", "$$", "}${", "${a}${b:-c}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := substitute(escapeRefs(s), false, func(ref string) string {
			t.Fatalf("%q referred to %q once escaped", s, ref)
			return ""
		})
		if err != nil || got != s {
			t.Fatalf("escaped %q reads back as %q, %v", s, got, err)
		}
		src := "tasks:\n  - name: a\n    flow:\n      - input: {id: a}\n        value: " + strconv.Quote(escapeRefs(s)) + "\n"
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\r\n\t\\") || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r > 0xffff }) {
			return // YAML's double quotes differ from Go's for these
		}
		sc, err := Load([]byte(src), "x.yaml", &Options{LookupEnv: env(nil)})
		if err != nil {
			t.Fatalf("escaped %q does not load: %v", s, err)
		}
		st, err := sc.Tasks[0].Steps[0].Expand(func(string) (string, bool) { return "", false })
		if err != nil || st.Value != s {
			t.Fatalf("escaped %q runs as %q, %v", s, st.Value, err)
		}
	})
}
