package cli

import (
	"slices"
	"strings"
	"testing"
)

// completions are the candidates `apex __complete ARGS…` (what shells
// call on Tab) offers, without their descriptions.
func completions(t *testing.T, args ...string) []string {
	t.Helper()
	out := mustRun(t, append([]string{"__complete"}, args...)...)
	var cs []string
	for _, line := range strings.Split(out, "\n") {
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		c, _, _ := strings.Cut(line, "\t")
		cs = append(cs, c)
	}
	return cs
}

func TestCompletion(t *testing.T) {
	a := startAdbLab(t, 1)
	dir := t.TempDir()
	ids := recordDays(t, dir, 2)
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"device ids", []string{"do", "Tap", "--device", ""}, []string{"adb/" + a.lab.Devices()[0].Serial, "wda:"}, nil},
		{"run ids", []string{"report", "--dir", dir, ""}, []string{"latest", ids[0], ids[1]}, nil},
		{"action names", []string{"do", "Ta"}, []string{"Tap"}, []string{"Scroll"}},
		{"iOS actions too", []string{"do", "App"}, []string{"AppSwitcher"}, nil},
		{"app packages", []string{"act", "--launch", "com.apex.s"}, []string{"com.apex.shop"}, []string{"com.apex.notes"}},
		{"android package names", []string{"act", "--launch", "com.android."}, []string{"com.android.settings", "com.android.browser"}, nil},
		{"app packages of --app specs", []string{"act", "--app", "../examples/apps/arcade.yaml", "--launch", ""}, []string{"com.apex.arcade", "com.apex.login"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := completions(t, tt.args...)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("apex %s⇥ offers %v; want %s among them", strings.Join(tt.args, " "), got, w)
				}
			}
			for _, n := range tt.not {
				if slices.Contains(got, n) {
					t.Errorf("apex %s⇥ offers %s", strings.Join(tt.args, " "), n)
				}
			}
		})
	}
}
