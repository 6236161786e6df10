package cli

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/internal/patience"
)

// walkStep is what the newcomer walk does with one command of the README.
type walkStep struct {
	want  string // the output must contain this
	serve bool   // it serves until stopped: start it, wait for want, keep it running
	skip  string // not run, and why
}

// readmeWalk has one entry per command in the README's sh blocks, in any
// order; the walk runs them in the README's order. A README command with
// no entry, or an entry no command has, fails the test: the README and
// this walk change together.
var readmeWalk = map[string]walkStep{
	"go run -v ./cmd/apex run --sim examples/shop-checkout.yaml": {want: "PASS examples/shop-checkout.yaml"},
	"make test":                      {skip: "it is the suite this test is part of"},
	"make install":                   {skip: "the walk's apex is built with it"},
	"apex version":                   {want: "(commit "},
	"source <(apex completion bash)": {want: ""},
	"go build -o apex ./cmd/apex":    {skip: "the walk's apex is built with make install"},
	"./apex run --sim examples/*.yaml --concurrency 3 --junit results.xml --summary summary.json": {want: "scripts: "},
	"./apex run --sim=ios examples/login.yaml":                                                    {want: "PASS examples/login.yaml"},
	"./apex report":               {want: "RUN  "},
	"./apex report latest --open": {want: "report.html"},
	`./apex act --sim --launch com.apex.shop 'tap "Search", type "headphones", then check "Noise Cancelling" exists'`:                         {want: `3. ok check "Noise Cancelling" shows`}, // what was checked, not just "ok check"
	`./apex act --sim --launch com.apex.shop '点击“Search”，输入“耳机”'`:                                                                             {want: "DONE: 2/2 steps done"},
	`./apex act --sim --app examples/apps/arcade.yaml --launch com.apex.arcade 'tap "Play", tap "Start game", then check "Level one" exists'`: {want: "DONE: 3/3 steps done"},
	"./apex sim --android 2 --ios 1":                    {want: "serving", serve: true},
	"./apex sim --app myapp.yaml":                       {skip: "myapp.yaml stands for the reader's own app"},
	"adb connect 127.0.0.1:6520":                        {want: "connected to 127.0.0.1:"},
	"./apex devices":                                    {want: "device  Apex_Sim  1080x2400"},
	"./apex screenshot --device 6520 -o screen.png":     {want: "wrote screen.png (1080x2400"},
	"./apex source --device 6520 --scene":               {want: "app=com.apex.launcher"},
	"./apex do --list --sim":                            {want: "Actions on this android device"},
	`./apex do Tap --device 6520 --param locate="Shop"`: {want: `Tap e4 item "Shop"`},
	"./apex scene examples/shop-results.xml":            {want: "app=com.apex.shop"},
	"./apex mcp --sim":                                  {want: "", skip: ""},
	"./apex playground --sim":                           {want: "Apex playground: http://127.0.0.1:", serve: true},
	`curl -X POST localhost:5800/interact -H 'Content-Type: application/json' -d '{"action":"Tap","params":{"locate":"Settings"}}'`: {skip: "the walk's playground listens on a free port, not 5800"},
}

// docsWalk has one entry per command in the sh blocks of docs/*.md that a
// newcomer runs without hardware or a model key; the doc marks every other
// command, for the walk and its reader, with an HTML comment before its
// block: <!-- walk: skip (why) --> for the whole block, or
// <!-- walk: skip `COMMAND` (why) --> for one command of it.
var docsWalk = map[string]walkStep{
	"go run ./cmd/apex run examples/suite":              {want: "5 scripts: 5 passed"},
	"go run ./cmd/apex run --sim=ios examples/suite":    {want: "5 scripts: 5 passed"},
	"go run ./cmd/apex run --tags smoke examples/suite": {want: "4 scripts: 4 passed"},
	"apex mcp --sim":                 {want: ""}, // stdio: it serves until stdin ends
	"apex mcp --sim=ios":             {want: ""},
	"apex mcp":                       {want: ""},
	"apex mcp --http 127.0.0.1:7300": {want: "serving MCP over HTTP on http://127.0.0.1:", serve: true},
	// docs/farm.md's one machine: a control plane and a host with four
	// simulated phones, served until the walk ends ("&"); the export sets
	// $APEX_FARM for the rest of the doc.
	"apex farm serve --data farm-data &":                    {want: "apex farm: serving on nats://", serve: true},
	"apex farm host --join nats://127.0.0.1:4222 --sim 4 &": {want: "serving its phones to nats://127.0.0.1:", serve: true},
	"export APEX_FARM=nats://127.0.0.1:4222":                {},
	"apex farm devices":                                     {want: "/sim-4  device"},
	"apex farm run --follow examples/settings-toggle.yaml":  {want: "\tpassed\tsettings-toggle.yaml (report: "},
	"apex farm runs":                                        {want: "passed  default  settings-toggle.yaml"},
	"apex playground --sim":                                 {want: "Apex playground: http://127.0.0.1:", serve: true},
	"apex playground":                                       {want: "Apex playground: http://127.0.0.1:", serve: true},
}

// docCommand is one command line of a Markdown file's sh blocks.
type docCommand struct {
	line string
	skip string // why the doc says the walk does not run it
}

// walkSkip is a walk annotation: skip the next block, or one command of it.
var walkSkip = regexp.MustCompile("^<!-- walk: skip (?:`([^`]+)` )?\\((.+)\\) -->$")

// shCommands are the command lines of the sh blocks of the Markdown file
// at path, in order: continuation lines joined, comments after two spaces
// dropped, each with the skip its walk annotation gives.
func shCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []docCommand
	in, cont := false, ""
	comment := regexp.MustCompile(`\s{2,}#.*$`)
	block, lines := "", map[string]string{} // the skips for the next block
	for _, line := range strings.Split(string(data), "\n") {
		if m := walkSkip.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if m[1] == "" {
				block = m[2]
			} else {
				lines[m[1]] = m[2]
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			if in {
				for c := range lines {
					t.Errorf("%s: a walk annotation skips %q, which the block after it does not have", path, c)
				}
				block, lines = "", map[string]string{}
			}
			in = false
			continue
		case !in || strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "":
			continue
		}
		line = strings.TrimSpace(comment.ReplaceAllString(line, ""))
		if next, ok := strings.CutSuffix(line, `\`); ok {
			cont += strings.TrimSpace(next) + " "
			continue
		}
		c := docCommand{line: cont + line, skip: block}
		if why, ok := lines[c.line]; ok {
			c.skip = why
			delete(lines, c.line)
		}
		cmds = append(cmds, c)
		cont = ""
	}
	return cmds
}

// readmeCommands are the command lines of the README's sh blocks, in
// order, and the commands it gives in prose.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	var cmds []string
	for _, c := range shCommands(t, "../README.md") {
		cmds = append(cmds, c.line)
	}
	data, _ := os.ReadFile("../README.md")
	for _, m := range regexp.MustCompile("`(source <\\(apex completion bash\\))`").FindAllStringSubmatch(string(data), -1) {
		cmds = append(cmds, m[1])
	}
	return cmds
}

// walkCommand is a command the walk runs, from the README or a doc.
type walkCommand struct {
	doc, line string
	step      walkStep
}

// docsCommands are the commands of docs/*.md the walk runs, in the docs'
// order; a command with neither an entry in docsWalk nor a skip in its
// doc, and an entry no doc has, fail t.
func docsCommands(t *testing.T) []walkCommand {
	t.Helper()
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs: %v %v", docs, err)
	}
	seen := map[string]bool{}
	var out []walkCommand
	for _, doc := range docs {
		for _, c := range shCommands(t, doc) {
			seen[c.line] = true
			step, ok := docsWalk[c.line]
			switch {
			case c.skip != "" && ok:
				t.Errorf("%s skips %q (%s), which docsWalk runs: drop one", doc, c.line, c.skip)
			case c.skip != "":
			case !ok:
				t.Errorf("%s: the command %q has no step in docsWalk and no <!-- walk: skip `…` (why) --> before its block", doc, c.line)
			default:
				out = append(out, walkCommand{doc: filepath.Base(doc), line: c.line, step: step})
			}
		}
	}
	for c := range docsWalk {
		if !seen[c] {
			t.Errorf("docsWalk checks %q, which no doc has any more", c)
		}
	}
	return out
}

// TestNewcomerWalk follows the README as a newcomer would: apex built and
// installed with make install, then every command of the README in order,
// then every command of docs/*.md a newcomer can run, in a directory
// holding what a clone holds, each checked by its output.
func TestNewcomerWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("the walk builds apex and runs every example")
	}
	cmds := readmeCommands(t)
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c] = true
		if _, ok := readmeWalk[c]; !ok {
			t.Errorf("the README's command %q has no step in the newcomer walk: add one to readmeWalk", c)
		}
	}
	for c := range readmeWalk {
		if !seen[c] {
			t.Errorf("readmeWalk checks %q, which the README no longer has", c)
		}
	}
	var walk []walkCommand
	for _, c := range cmds {
		walk = append(walk, walkCommand{doc: "README.md", line: c, step: readmeWalk[c]})
	}
	walk = append(walk, docsCommands(t)...)
	if t.Failed() {
		return
	}
	bin := t.TempDir()
	build := exec.Command("make", "-s", "install")
	build.Dir = ".."
	build.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	work := t.TempDir()
	if out, err := exec.Command("cp", "-r", "../examples", work).CombinedOutput(); err != nil {
		t.Fatalf("copy the examples: %v\n%s", err, out)
	}
	adbServer := adbtest.StartServer(t)
	_, adbPort, _ := net.SplitHostPort(adbServer.Addr())
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ADB_SERVER_SOCKET=") { // adb reads an empty one as a bad address
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "ANDROID_ADB_SERVER_PORT="+adbPort,
		RunsDirEnv+"=", "APEX_MODEL_NAME=", "APEX_MODEL_BASE_URL=", "APEX_MODEL_API_KEY=", "APEX_WDA_URLS=",
		"XDG_CONFIG_HOME="+t.TempDir(), mainEnv+"=")
	simPort := ""  // the port of the walk's apex sim, for the README's 6520
	farmAddr := "" // the address of the walk's apex farm serve, for the docs' 127.0.0.1:4222
	owner := t     // what serves lives until the walk ends, not its step
	doc, docEnv := "", env
	for _, wc := range walk {
		c, step := wc.line, wc.step
		if step.skip != "" {
			continue
		}
		if wc.doc != doc { // a doc's exports last until its end
			doc, docEnv = wc.doc, env
		}
		line := strings.Replace(strings.Replace(c, "go run -v ./cmd/apex ", "apex ", 1), "go run ./cmd/apex ", "apex ", 1)
		line = strings.ReplaceAll(line, "./apex ", "apex ")
		if bg, ok := strings.CutSuffix(line, " &"); ok {
			if !step.serve {
				t.Fatalf("%s: %q runs in the background: its step must serve", wc.doc, c)
			}
			line = bg
		}
		if farmAddr != "" {
			line = strings.ReplaceAll(line, "127.0.0.1:4222", farmAddr)
		}
		if vars, ok := strings.CutPrefix(line, "export "); ok {
			docEnv = append(slices.Clip(docEnv), strings.Fields(vars)...)
			continue
		}
		switch {
		case strings.HasPrefix(line, "apex farm serve"):
			line += " --listen 127.0.0.1:0" // a free port
		case strings.HasPrefix(line, "apex sim"):
			line += " --port-base 0 --wda-port-base 0"
		case strings.HasPrefix(line, "apex playground"):
			line += " --port 0 --no-open"
		case strings.HasPrefix(line, "apex report latest --open"):
			line = "apex report latest" // no browser here
		case strings.HasPrefix(line, "apex mcp --http 127.0.0.1:"):
			line = "apex mcp --http 127.0.0.1:0" // a free port
		}
		if simPort != "" {
			line = strings.ReplaceAll(line, "6520", simPort)
		}
		t.Run(wc.doc+": "+c, func(t *testing.T) {
			cmd := exec.Command("bash", "-c", line)
			cmd.Dir, cmd.Env = work, docEnv
			if !step.serve {
				ctx := patience.Context(t, 5*time.Minute)
				cmd = exec.CommandContext(ctx, "bash", "-c", line)
				cmd.Dir, cmd.Env = work, docEnv
				cmd.Stdin = strings.NewReader("") // apex mcp reads stdin until it ends
				out, err := cmd.CombinedOutput()
				if err != nil || !strings.Contains(string(out), step.want) {
					t.Fatalf("%s: %v; want output containing %q:\n%s", line, err, step.want, out)
				}
				return
			}
			out := serveUntil(t, owner, cmd, step.want)
			if _, addr, ok := strings.Cut(out, "apex farm: serving on nats://"); ok && strings.HasPrefix(line, "apex farm serve") {
				farmAddr, _, _ = strings.Cut(addr, " ")
			}
			if strings.HasPrefix(line, "apex sim") {
				for _, l := range strings.Split(out, "\n") {
					if f := strings.Fields(l); len(f) > 2 && f[0] == "android-1" {
						_, simPort, _ = net.SplitHostPort(f[2])
					}
				}
			}
		})
	}
}

// serveUntil starts a command that serves until stopped, waits for want
// in its output and leaves it running until the test owner ends. It
// returns the output up to want.
func serveUntil(t, owner *testing.T, cmd *exec.Cmd, want string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Stdin = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	owner.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); r.Close() })
	found := make(chan string, 1)
	go func() {
		var out strings.Builder
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), want) {
				found <- out.String()
				// Keep reading so the command never blocks on a full pipe.
				for sc.Scan() {
				}
				return
			}
		}
		found <- ""
	}()
	select {
	case out := <-found:
		if out == "" {
			t.Fatalf("%s ended without printing %q", cmd.Args, want)
		}
		return out
	case <-time.After(procTimeout):
		t.Fatalf("%s did not print %q in %v", cmd.Args, want, procTimeout)
	}
	return ""
}
