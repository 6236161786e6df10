//go:build !apexlite

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/apexagent/apex/sim"
)

// restoreSimState brings the phone back to the state saved in file, if
// there is one (a previous apex sim wrote it).
func restoreSimState(ph *sim.Phone, file string) error {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--state-file: %w", err)
	}
	var s sim.Saved
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("--state-file %s: %w: delete it to start the phone afresh", file, err)
	}
	if err := ph.Restore(s); err != nil {
		return fmt.Errorf("--state-file %s: restore: %w", file, err)
	}
	return nil
}

// simStateEvery is how often the phone's state is saved when nothing on
// its screen changed (a mock location moves nothing on screen).
const simStateEvery = time.Second

// keepSimState writes the phone's state to file whenever it changes,
// until ctx ends; each write replaces the file whole.
func keepSimState(ctx context.Context, ph *sim.Phone, file string) error {
	var last []byte
	tick := time.NewTicker(simStateEvery)
	defer tick.Stop()
	for {
		changed := ph.ScreenChanged()
		b, err := json.Marshal(ph.Save())
		if err != nil {
			return err
		}
		if !bytes.Equal(b, last) {
			tmp := file + ".tmp"
			if err := os.WriteFile(tmp, b, 0o600); err != nil {
				return fmt.Errorf("--state-file: %w", err)
			}
			if err := os.Rename(tmp, file); err != nil {
				return fmt.Errorf("--state-file: %w", err)
			}
			last = b
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick.C:
		}
	}
}
