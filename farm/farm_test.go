package farm_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/audit"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/internal/patience"
	"github.com/nats-io/nats.go/jetstream"
)

var apexBin string

// TestMain builds the apex command once for the tests, which run it as
// real processes.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apex-farm-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	apexBin = filepath.Join(dir, "apex")
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", apexBin, "github.com/apexagent/apex/cmd/apex").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build apex: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The test farm's timings: short, as a user may set them too, but long
// enough that hosts starved of CPU (20 phones starting at once on two
// cores, with other test packages running beside) still renew their
// leases in time.
const (
	leaseTTL     = 10 * time.Second
	heartbeatTTL = 3 * time.Second
)

// wifiOff fails on a phone that kept an earlier run's leftovers.
const wifiOff = farmtest.WifiOff

// slow is wifiOff with a pause, so runs are still going when a host dies.
const slow = wifiOff + "      - sleep: 4000\n"

// proc is an apex process the test started.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  chan string // stdout lines
	log  *lockedBuf  // stderr
	done chan struct{}
}

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(apexBin, args...), out: make(chan string, 1000), log: &lockedBuf{}, done: make(chan struct{})}
	p.cmd.Stderr = p.log
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.out <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, stdout)
		p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", p.name, tail(p.log.String(), 3000))
		}
	})
	return p
}

func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// line waits for a stdout line containing s.
func (p *proc) line(t *testing.T, s string, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l := <-p.out:
			if strings.Contains(l, s) {
				return l
			}
		case <-p.done:
			t.Fatalf("%s exited before printing %q:\n%s", p.name, s, tail(p.log.String(), 3000))
		case <-deadline:
			t.Fatalf("%s did not print %q within %v:\n%s", p.name, s, within, tail(p.log.String(), 3000))
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// cluster starts three `apex farm serve` members routed to each other and
// returns them with the client URL list.
func cluster(t *testing.T) ([]*proc, string) {
	ports := freePorts(t, 6)
	var routes []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("127.0.0.1:%d", ports[3+i]))
	}
	var members []*proc
	var urls []string
	for i := range 3 {
		var others []string
		for j, r := range routes {
			if j != i {
				others = append(others, r)
			}
		}
		members = append(members, start(t, fmt.Sprintf("serve-%d", i+1), "farm", "serve", "--data", t.TempDir(),
			"--name", fmt.Sprintf("cp-%d", i+1), "--listen", fmt.Sprintf("127.0.0.1:%d", ports[i]),
			"--cluster", routes[i], "--routes", strings.Join(others, ","),
			"--lease-ttl", leaseTTL.String(), "--heartbeat-ttl", heartbeatTTL.String()))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	for _, m := range members {
		m.line(t, "serving on", 90*time.Second)
	}
	return members, strings.Join(urls, ",")
}

func writeScript(t *testing.T, name, body string) string {
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// queueRuns runs `apex farm run` and returns the queued runs.
func queueRuns(t *testing.T, url string, file string, n int, extra ...string) []queue.Run {
	t.Helper()
	args := append([]string{"--json", "farm", "run", "--farm", url}, extra...)
	for range n {
		args = append(args, file)
	}
	out, err := exec.Command(apexBin, args...).Output()
	if err != nil {
		t.Fatalf("apex farm run: %v: %s", err, stderrOf(err))
	}
	var runs []queue.Run
	if err := json.Unmarshal(out, &runs); err != nil || len(runs) != n {
		t.Fatalf("apex farm run printed %d runs (%v): %s", len(runs), err, out)
	}
	return runs
}

func stderrOf(err error) string {
	if e, ok := err.(*exec.ExitError); ok {
		return string(e.Stderr)
	}
	return ""
}

// waitFinal waits until every run (or the retry of a lost one) has ended
// and returns the final record of each, keyed by the ID it was queued as.
func waitFinal(ctx context.Context, t *testing.T, q *queue.Queue, runs []queue.Run) map[string]queue.Run {
	t.Helper()
	latest := map[string]queue.Run{}
	out := map[string]queue.Run{}
	resolve := func() bool {
		for _, r := range runs {
			cur, ok := latest[r.ID]
			for ok && cur.State == queue.Lost && cur.RetriedBy != "" {
				cur, ok = latest[cur.RetriedBy]
			}
			if !ok || !queue.Final(cur.State) {
				return false
			}
			out[r.ID] = cur
		}
		return true
	}
	err := q.WatchAll(ctx, func(r queue.Run) bool {
		latest[r.ID] = r
		return !resolve()
	})
	if err != nil {
		var open []string
		for _, r := range runs {
			if _, ok := out[r.ID]; !ok {
				open = append(open, r.ID+" "+latest[r.ID].State)
			}
		}
		t.Fatalf("%v; runs not ended: %v", err, open)
	}
	return out
}

// checkExclusive reads the audit log and fails when a device (or any
// leased resource) was acquired while someone held it.
func checkExclusive(ctx context.Context, t *testing.T, js jetstream.JetStream) int {
	t.Helper()
	events, err := audit.Read(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]audit.Event{}
	acquired := 0
	for _, e := range events {
		switch e.Kind {
		case audit.LeaseAcquired:
			acquired++
			if h, ok := held[e.Resource]; ok {
				t.Errorf("audit #%d: %s acquired %s (fence %d) while %s held it (fence %d, run %s)",
					e.Seq, e.Actor, e.Resource, e.Fence, h.Actor, h.Fence, h.Run)
			}
			held[e.Resource] = e
		case audit.LeaseReleased, audit.LeaseExpired, audit.LeaseBroken, audit.LeaseLost:
			if h, ok := held[e.Resource]; ok && h.Fence == e.Fence {
				delete(held, e.Resource)
			}
		}
	}
	return acquired
}

// TestFarmCluster is issue 18's proof: three control-plane members and two
// hosts with ten simulated phones each, all real processes on loopback.
func TestFarmCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five processes and runs 200 scripts")
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(8*time.Minute))
	defer cancel()
	members, url := cluster(t)
	hosts := map[string]*proc{}
	for _, id := range []string{"host-a", "host-b"} {
		hosts[id] = start(t, id, "farm", "host", "--join", url, "--id", id, "--sim", "10", "--label", "pool=proof",
			"--runs-dir", t.TempDir())
	}
	nc, js, err := farm.Connect(farm.ConnectOptions{URL: url, Name: "proof"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	q, err := queue.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	file := writeScript(t, "wifi.yaml", wifiOff)
	// Queue once both hosts have registered their phones, so the runs can
	// spread over both.
	reg, err := registry.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 20; farm.Sleep(ctx, 100*time.Millisecond) {
		devs, _ := reg.Devices(ctx)
		if n = len(devs); ctx.Err() != nil {
			t.Fatalf("%d of 20 phones registered", n)
		}
	}

	t.Run("200 runs over 20 phones", func(t *testing.T) {
		runs := queueRuns(t, url, file, 200, "--labels", "pool=proof")
		final := waitFinal(ctx, t, q, runs)
		perHost := map[string]int{}
		for id, r := range final {
			if r.State != queue.Passed {
				t.Errorf("run %s on %s: %s: %s", id, r.Device, r.State, r.Reason)
			}
			perHost[r.Host]++
		}
		if perHost["host-a"] == 0 || perHost["host-b"] == 0 {
			t.Errorf("runs per host: %v, want both hosts used", perHost)
		}
		if n := checkExclusive(ctx, t, js); n < 200 {
			t.Errorf("the audit log has %d lease acquisitions, want 200 or more", n)
		}
		t.Logf("runs per host: %v", perHost)
	})

	t.Run("a host dies mid-run", func(t *testing.T) {
		slowFile := writeScript(t, "slow.yaml", slow)
		runs := queueRuns(t, url, slowFile, 20, "--retries", "1")
		// Wait until host-a runs some of them, then kill it.
		var onA []string
		deadline := time.Now().Add(time.Minute)
		for len(onA) == 0 && time.Now().Before(deadline) {
			for _, r := range runs {
				if cur, err := q.Get(ctx, r.ID); err == nil && cur.Host == "host-a" && cur.State == queue.Running {
					onA = append(onA, r.ID)
				}
			}
		}
		if len(onA) == 0 {
			t.Fatal("no run reached host-a within a minute")
		}
		hosts["host-a"].kill()
		killed := time.Now()
		final := waitFinal(ctx, t, q, runs)
		for _, id := range onA {
			lost, err := q.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if lost.State != queue.Lost {
				t.Errorf("run %s on the killed host ended %s: %s", id, lost.State, lost.Reason)
				continue
			}
			if d := lost.Ended.Sub(killed); d > 3*leaseTTL {
				t.Errorf("run %s was found lost %v after its host died, want within 3 lease TTLs (%v)", id, d, 3*leaseTTL)
			}
		}
		for id, r := range final {
			if r.State != queue.Passed {
				t.Errorf("run %s: %s on %s: %s", id, r.State, r.Host, r.Reason)
			}
			if contains(onA, id) && (r.Host != "host-b" || r.Attempt != 1) {
				t.Errorf("lost run %s ended on %s at attempt %d, want its retry on host-b", id, r.Host, r.Attempt)
			}
		}
		checkExclusive(ctx, t, js)
	})

	t.Run("a control-plane member dies", func(t *testing.T) {
		// Every request a host, the reaper or a client had sent to this
		// member is lost with it, and the streams it led answer no one
		// until a new leader is elected: reads that decide a run's state
		// must be sent again (farm.LeaderGet), or the runs never end.
		members[0].kill()
		runs := queueRuns(t, url, file, 20, "--retries", "1")
		final := waitFinal(ctx, t, q, runs)
		for id, r := range final {
			if r.State != queue.Passed {
				t.Errorf("run %s: %s on %s: %s", id, r.State, r.Host, r.Reason)
			}
		}
		checkExclusive(ctx, t, js)
	})
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
