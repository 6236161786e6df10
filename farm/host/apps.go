package host

import (
	"context"
	"fmt"

	"github.com/apexagent/apex/farm/queue"
)

// fetchApps brings the artifacts run r installs into the host's cache; it
// returns their files, kept until release. Each is resolved in r's
// project's store first, even when cached: a run installs only its own
// project's apps.
func (a *Agent) fetchApps(ctx context.Context, r queue.Run) (files []string, release func(), err error) {
	var releases []func()
	release = func() {
		for _, f := range releases {
			f()
		}
	}
	for _, hash := range r.Apps {
		info, err := a.artifacts.Resolve(ctx, r.Project, hash)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("app %s: %w", hash, err)
		}
		path, rel, err := a.apps.Fetch(ctx, info)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("app %s: %w", hash, err)
		}
		releases = append(releases, rel)
		files = append(files, path)
	}
	return files, release, nil
}
