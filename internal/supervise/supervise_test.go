package supervise_test

import (
	"bufio"
	"bytes"
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

// TestRelay: events written by Relay come back whole from ReadRelayed, and
// lines that are not events are skipped.
func TestRelay(t *testing.T) {
	var buf bytes.Buffer
	send := supervise.Relay(&buf)
	in := []supervise.Event{
		{Name: "encoder", Kind: supervise.Started, Run: 1},
		{Name: "encoder", Kind: supervise.Exited, Run: 1, Err: errors.New("signal: killed"), Backoff: 200 * time.Millisecond},
		{Name: "encoder", Kind: supervise.Stopped, Run: 2},
	}
	send(in[0])
	buf.WriteString("not json\n{\"name\":\"x\",\"kind\":\"exploded\",\"run\":1}\n{}\n")
	send(in[1])
	send(in[2])
	var out []supervise.Event
	if err := supervise.ReadRelayed(&buf, func(e supervise.Event) { out = append(out, e) }); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d events, want %d: %v", len(out), len(in), out)
	}
	for i := range in {
		if out[i].String() != in[i].String() {
			t.Errorf("event %d: %q, want %q", i, out[i], in[i])
		}
	}
}

func FuzzReadRelayed(f *testing.F) {
	f.Add([]byte("{\"name\":\"a\",\"kind\":\"exited\",\"run\":1,\"error\":\"boom\",\"backoffMs\":5}\n"))
	f.Add([]byte("\n\n{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = supervise.ReadRelayed(bytes.NewReader(b), func(e supervise.Event) {
			if e.Name == "" || e.Run < 1 {
				t.Fatalf("an event without a name or run: %+v", e)
			}
		})
	})
}
