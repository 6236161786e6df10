package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWDAURLsFromConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, text string
		want       []string
		err        string
	}{
		{"list", "model:\n  name: x\nwda:\n  urls: [http://127.0.0.1:8100, 10.0.0.7:8100]\n", []string{"http://127.0.0.1:8100", "10.0.0.7:8100"}, ""},
		{"comma string", "wda:\n  urls: http://a:8100, http://b:8100\n", []string{"http://a:8100", "http://b:8100"}, ""},
		{"no section", "model:\n  name: x\n", nil, ""},
		{"bad url", "wda:\n  urls: [ftp://x]\n", nil, "wda.urls"},
		{"a map", "wda:\n  urls: {a: b}\n", nil, "expected a list"},
		{"not yaml", "wda: [\n", nil, "yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wdaURLsFromConfig(write(tt.name+".yaml", tt.text))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v; want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got, err := wdaURLsFromConfig(filepath.Join(dir, "missing.yaml")); err != nil || got != nil {
		t.Errorf("missing file = %v, %v; want none", got, err)
	}
}
