package agent_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/perceive"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func strategies(t *testing.T, evs []event.Event) []string {
	var out []string
	for _, r := range payloads[struct {
		Strategy string `json:"strategy"`
	}](t, evs, event.EvRetry) {
		out = append(out, r.Strategy)
	}
	return out
}

func states(t *testing.T, evs []event.Event) []string {
	var out []string
	for _, s := range payloads[struct{ State string }](t, evs, event.EvState) {
		out = append(out, s.State)
	}
	return out
}

// The sale popup opens 800 ms after the Shop starts (seeded), in the middle
// of the task: recovery dismisses it and the step goes on.
func TestPopupMidTask(t *testing.T) {
	p := startPhone(t, popupSeed)
	p.launch(t, shop)
	rt, _ := agent.New(agent.Config{Perception: noOCR})
	goal := `wait 1 s, type "headphones" into "Search", tap "Pro Noise Cancelling Headphones", tap "Add to cart", then check "Cart (1)" exists`
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: goal, Driver: p.drv, Store: openStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Done {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
	}
	if s := strategies(t, res.Events); len(s) == 0 || s[0] != agent.StratDismiss {
		t.Fatalf("retries %v, want the popup dismissed first\n%s", s, dump(res.Events))
	}
	c := list(p.state(t, shop)["cart"])
	if len(c) != 1 || item(c[0])["id"] != "p009" {
		t.Fatalf("cart = %v", c)
	}
}

// A target that is not there: two retries with different strategies, one
// re-plan, then FAILED, and the events say why.
func TestMissingElement(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, login)
	rt, _ := agent.New(agent.Config{CheckTimeout: 300 * time.Millisecond, Perception: noOCR})
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: `type "demo" into "Username", tap "Create account"`, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Failed || !strings.Contains(res.Reason, "Create account") {
		t.Fatalf("status %s, reason %q\n%s", res.Status, res.Reason, dump(res.Events))
	}
	s := strategies(t, res.Events)
	if len(s) != 2 || s[0] == s[1] {
		t.Fatalf("strategies %v: want two different ones\n%s", s, dump(res.Events))
	}
	if st := states(t, res.Events); !contains(st, "REPLANNING") || st[len(st)-1] != "FAILED" {
		t.Fatalf("states %v: want a re-plan, then FAILED", st)
	}
	acted := payloads[struct {
		Step int `json:"step_id"`
	}](t, res.Events, event.EvActed)
	n := 0
	for _, a := range acted {
		if a.Step == 2 {
			n++
		}
	}
	if n > 3 {
		t.Fatalf("step 2 was tried %d times; at most 1 + %d retries before the re-plan", n, agent.MaxRetries)
	}
	// The first step's effect stands.
	if u := p.state(t, login)["username"]; u != "demo" {
		t.Fatalf("username = %v", u)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// flaky drops or delays taps, as a busy phone does.
// noOCR keeps these tests about recovery from reading pixels: a missing
// target would be searched for in the whole screenshot, slowly on a busy
// machine.
var noOCR = perceive.Options{Mode: perceive.Off}

type flaky struct {
	device.Driver
	mu   sync.Mutex
	drop int           // taps to ignore
	late chan struct{} // when set, the first tap lands once it is closed
	taps atomic.Int32
}

func (f *flaky) Tap(ctx context.Context, p device.Point) error {
	f.taps.Add(1)
	f.mu.Lock()
	if f.drop > 0 {
		f.drop--
		f.mu.Unlock()
		return nil
	}
	if late := f.late; late != nil {
		f.late = nil
		f.mu.Unlock()
		go func() {
			<-late
			_ = f.Driver.Tap(context.Background(), p)
		}()
		return nil
	}
	f.mu.Unlock()
	return f.Driver.Tap(ctx, p)
}

// A tap the phone ignores once: the validator sees no change, recovery
// retries with a changed strategy, and the box ends up ticked exactly once.
func TestTapIgnoredOnce(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, login)
	d := &flaky{Driver: p.drv, drop: 1}
	rt, _ := agent.New(agent.Config{CheckTimeout: 300 * time.Millisecond, Perception: noOCR})
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: `tap "Remember me", then check "Remember me" is checked`, Driver: d})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Done {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
	}
	if s := strategies(t, res.Events); len(s) != 1 {
		t.Fatalf("retries %v, want one", s)
	}
	if d.taps.Load() != 2 || p.state(t, login)["remember"] != true {
		t.Fatalf("%d taps, remember = %v", d.taps.Load(), p.state(t, login)["remember"])
	}
}

// A tap that lands late, after the validator gave up on it: the retry
// first finds the expected state already there and skips, so the box is
// not toggled twice (idempotency). The tap lands when recovery decides to
// retry, however long that takes on a busy machine.
func TestLateTapNotRepeated(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, login)
	late := make(chan struct{})
	d := &flaky{Driver: p.drv, late: late}
	var once sync.Once
	rt, _ := agent.New(agent.Config{CheckTimeout: 200 * time.Millisecond, Perception: noOCR,
		OnEvent: func(e event.Event) {
			if e.ActionType == event.EvRetry {
				once.Do(func() { close(late) })
			}
		}})
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: `tap "Remember me", then check "Remember me" is checked`, Driver: d})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Done {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
	}
	if got := d.taps.Load(); got != 1 {
		t.Fatalf("%d taps, want 1 (the late one counted)\n%s", got, dump(res.Events))
	}
	if len(payloads[map[string]any](t, res.Events, event.EvSkipped)) != 1 {
		t.Fatalf("no step_skipped event\n%s", dump(res.Events))
	}
	if p.state(t, login)["remember"] != true {
		t.Fatal("remember is not set")
	}
}

// The Shop crashes on "Write a review": the tracer reads the crash from
// logcat, recovery relaunches the app, and the task fails within the rules
// with the crash in its events.
func TestAppCrash(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, shop)
	rt, _ := agent.New(agent.Config{CheckTimeout: 300 * time.Millisecond, Perception: noOCR})
	goal := `type "toaster" into "Search", tap "Ultra Toaster", tap "Write a review", then check "Your review" exists`
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: goal, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Failed || !strings.Contains(res.Reason, "crash: com.apex.shop (java.lang.NullPointerException") {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
	}
	var crash *event.Signal
	for _, s := range payloads[event.Signal](t, res.Events, event.EvSignal) {
		if s.Kind == event.SigCrash {
			crash = &s
			break
		}
	}
	if crash == nil || crash.App != shop || !strings.Contains(crash.Detail, "NullPointerException") {
		t.Fatalf("crash signal = %+v\n%s", crash, dump(res.Events))
	}
	// The crash reaches logcat a moment after the app is gone: on a busy
	// machine the first retry may come before the tracer read it; then
	// the next one relaunches.
	if s := strategies(t, res.Events); !slices.Contains(s, agent.StratRelaunch) {
		t.Fatalf("strategies %v, want a relaunch_app", s)
	}
	if fg, _ := p.dev.Phone.Foreground(); fg != shop {
		t.Fatalf("foreground %s: recovery did not relaunch the Shop", fg)
	}
}

// Cancelling mid-task stops at once and leaves a record that replays to
// the same result: started, some steps, finished as canceled.
func TestCancelMidTask(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, login)
	st := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acted atomic.Int32
	rt, _ := agent.New(agent.Config{OnEvent: func(e event.Event) {
		if e.ActionType == event.EvActed && acted.Add(1) == 2 {
			cancel()
		}
	}})
	res, err := rt.Act(ctx, agent.Task{Goal: taskNamed(t, "login").goal, Driver: p.drv, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Canceled || res.State != "CANCELED" {
		t.Fatalf("status %s state %s: %s\n%s", res.Status, res.State, res.Reason, dump(res.Events))
	}
	evs, err := st.Events(context.Background(), res.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1]; last.ActionType != event.EvTaskFinished {
		t.Fatalf("last stored event is %s, want task_finished", last.ActionType)
	}
	re, err := agent.Replay(evs)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(res, re, cmpopts.IgnoreFields(agent.Result{}, "Events")); d != "" {
		t.Fatalf("replay differs (-act +replay)\n%s", d)
	}
	done := 0
	for _, s := range re.Steps {
		if s.Status == agent.Done {
			done++
		}
	}
	if done >= len(re.Steps) || acted.Load() != 2 {
		t.Fatalf("%d of %d steps done after the cancel, %d acted", done, len(re.Steps), acted.Load())
	}
}

// A text that matches only ignoring case is neither a pass nor a fail: the
// task stops for a person.
func TestReviewRequired(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, login)
	rt, _ := agent.New(agent.Config{CheckTimeout: 100 * time.Millisecond, Perception: noOCR})
	res, err := rt.Act(ctxT(t, 30*time.Second), agent.Task{Goal: `check "Welcome back" reads "welcome  BACK", then tap "Sign in"`, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.ReviewRequired || res.State != "REVIEW_REQUIRED" {
		t.Fatalf("status %s state %s\n%s", res.Status, res.State, dump(res.Events))
	}
	if len(payloads[map[string]any](t, res.Events, event.EvActed)) != 0 {
		t.Fatal("the task went on after REVIEW_REQUIRED")
	}
}
