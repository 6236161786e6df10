package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes the command line in-process and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRoot(&out, &errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, "version")
	if err != nil || !strings.HasPrefix(out, "apex ") {
		t.Fatalf("apex version = %q, %v", out, err)
	}
	out, _, err = run(t, "--json", "version")
	var v map[string]string
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || v["version"] == "" {
		t.Fatalf("apex --json version = %q, %v", out, err)
	}
}

func TestBadLogLevel(t *testing.T) {
	if _, _, err := run(t, "--log-level", "loud", "version"); err == nil || !strings.Contains(err.Error(), "debug, info") {
		t.Fatalf("bad --log-level err = %v; want one that lists the levels", err)
	}
}

// emptyFile is an empty apex.yaml: no model, whatever the machine has.
func emptyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "apex.yaml")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
