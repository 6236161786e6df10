package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/artifact"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// TestRunInstallsOnlyItsProjectsApps: a run of project A installs A's
// app; a run of project B naming the same hash ends in error, though the
// host has the file in its cache: the host resolves each app in the run's
// project before it looks in the cache.
func TestRunInstallsOnlyItsProjectsApps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	_, js := p.Conn()
	apk := filepath.Join(t.TempDir(), "notes.apk")
	if err := os.WriteFile(apk, adbdtest.APK(t, "com.acme.notes", "Acme Notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	app, _, err := artifact.New(js).Upload(ctx, apk, "A", "")
	if err != nil {
		t.Fatal(err)
	}
	q := farmtest.Queue(ctx, t, p)
	script := []byte("android:\n  launch: com.acme.notes\ntasks:\n  - name: opens\n    flow:\n      - assert: {exists: Acme Notes is installed.}\n")
	for _, tc := range []struct {
		project, state, reason string
	}{
		{"A", queue.Passed, ""},
		{"B", queue.Error, "project B has no apps"},
	} {
		r := farmtest.RunToEnd(ctx, t, q, queue.Run{Project: tc.project, Name: "notes.yaml", Script: script, Apps: []string{app.Hash}})
		if r.State != tc.state || !strings.Contains(r.Reason, tc.reason) {
			t.Errorf("a run of %s naming A's app: %s (%s), want %s with %q", tc.project, r.State, r.Reason, tc.state, tc.reason)
		}
	}
}
