package supervise_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apexagent/apex/internal/supervise"
	"github.com/google/go-cmp/cmp"
)

// TestBackoff: short runs wait 100ms, 200ms, 400ms… up to the cap; a
// stable run starts from the first wait again; the end of ctx stops it.
func TestBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var events []supervise.Event
		lasts := []time.Duration{0, time.Second, 0, 0, 20 * time.Second, 0}
		n := 0
		errc := make(chan error)
		go func() {
			errc <- supervise.Run(ctx, supervise.Options{Name: "enc", MaxBackoff: 300 * time.Millisecond,
				OnEvent: func(e supervise.Event) { events = append(events, e) }},
				func(ctx context.Context) error {
					d := lasts[n]
					n++
					if n == len(lasts) {
						cancel()
						<-ctx.Done()
						return nil
					}
					time.Sleep(d)
					return errors.New("boom")
				})
		}()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
		var waits []time.Duration
		for _, e := range events {
			if e.Kind == supervise.Exited {
				waits = append(waits, e.Backoff)
				if e.Err == nil || e.Name != "enc" {
					t.Errorf("exit event %+v: want the crash and the name", e)
				}
			}
		}
		want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 100 * time.Millisecond}
		if diff := cmp.Diff(want, waits); diff != "" {
			t.Errorf("backoffs (-want +got):\n%s", diff)
		}
		if last := events[len(events)-1]; last.Kind != supervise.Stopped {
			t.Errorf("last event %v, want stopped", last)
		}
	})
}

// TestCommandKilled runs a real process, kills it from outside, and sees
// it run again; the end of ctx stops it for good.
func TestCommandKilled(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	pids := make(chan int, 4)
	var mu sync.Mutex
	var exits []supervise.Event
	// Each run writes its pid on the shared pipe, then sleeps.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			pid, _ := strconv.Atoi(sc.Text())
			pids <- pid
		}
	}()
	run := supervise.Command(func(ctx context.Context) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, sh, "-c", `echo $$; exec sleep 60`)
		cmd.Stdout = pw
		return cmd, nil
	}, time.Second)
	done := make(chan error)
	go func() {
		done <- supervise.Run(ctx, supervise.Options{Name: "sleeper", OnEvent: func(e supervise.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Kind == supervise.Exited {
				exits = append(exits, e)
			}
		}}, run)
	}()
	first := <-pids
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second := <-pids
	if second == first {
		t.Fatalf("the same pid %d after the kill", first)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(exits) != 1 || !strings.Contains(exits[0].Err.Error(), "killed") {
		t.Errorf("exit events %v: want the one kill", exits)
	}
	if err := syscall.Kill(second, 0); err == nil {
		t.Errorf("process %d still runs after the end of ctx", second)
	}
}
