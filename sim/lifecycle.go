package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apexagent/apex/sim/adbd"
)

// Launch brings an installed package to the foreground, starting it if
// needed.
func (p *Phone) Launch(pkg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pkg = p.resolve(pkg)
	if _, ok := p.apps[pkg]; !ok {
		return fmt.Errorf("sim: launch %s: %w", pkg, adbd.ErrUnknownPackage)
	}
	p.wake()
	p.launch(pkg)
	return nil
}

// ForceStop kills an app; its persistent state stays.
func (p *Phone) ForceStop(pkg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pkg = p.resolve(pkg)
	a, ok := p.apps[pkg]
	if !ok || !a.running {
		return
	}
	p.logcat.add(1000, "I", "ActivityManager", fmt.Sprintf("Force stopping %s appid=10%03d user=0: from pid %d", pkg, len(pkg), a.pid))
	p.kill(a)
}

func (p *Phone) kill(a *appRun) {
	a.reset()
	p.recents = slices.DeleteFunc(p.recents, func(s string) bool { return s == a.spec.Package })
	if p.fg == a.spec.Package {
		p.toForeground(Launcher)
	}
	p.changed()
}

func (p *Phone) launch(pkg string) {
	a := p.apps[pkg]
	if !a.running {
		a.running = true
		p.nextPID += 7
		a.pid = p.nextPID
		p.logcat.add(1000, "I", "ActivityManager", fmt.Sprintf("Start proc %d:%s/u0a%d for top-activity {%s/%s}",
			a.pid, pkg, 100+len(p.order), pkg, a.spec.Activity))
	}
	p.logcat.add(1000, "I", "ActivityTaskManager", fmt.Sprintf(
		"START u0 {act=android.intent.action.MAIN cat=[android.intent.category.LAUNCHER] flg=0x10200000 cmp=%s/%s} from uid 2000",
		pkg, a.spec.Activity))
	if len(a.stack) == 0 {
		p.push(a, a.spec.Start)
	}
	p.toForeground(pkg)
	p.logcat.add(1000, "I", "ActivityTaskManager", fmt.Sprintf("Displayed %s/%s: +%dms", pkg, p.activity(a), 180+p.rnd.IntN(200)))
}

func (p *Phone) toForeground(pkg string) {
	p.inOverview = false
	if p.fg != "" && p.fg != pkg {
		if a := p.apps[p.fg]; a != nil {
			a.focus = ""
		}
	}
	p.fg = pkg
	if pkg != Launcher {
		p.recents = slices.DeleteFunc(p.recents, func(s string) bool { return s == pkg })
		p.recents = append(p.recents, pkg)
	}
	p.changed()
}

// push opens a screen on top of the app's back stack.
func (p *Phone) push(a *appRun, id string) {
	sc := a.screen(id)
	if sc == nil {
		return
	}
	now := p.clock.Now()
	sr := &screenRun{spec: sc, entered: now}
	a.stack = append(a.stack, sr)
	a.focus = ""
	a.dialog = nil
	p.enter(a, sr)
}

func (p *Phone) enter(a *appRun, sr *screenRun) {
	sc := sr.spec
	if pp := sc.Popup; pp != nil && !(pp.Once && a.popups[pp.Dialog]) {
		// Roll even when the chance is 0 or 1 so the sequence of draws,
		// and thus every later popup, depends only on the seed and the
		// path taken.
		if a.rnd.Float64() < pp.Chance {
			sr.popup = pp.Dialog
			sr.popupAt = sr.entered.Add(time.Duration(pp.Delay))
			a.popups[pp.Dialog] = true
		}
	}
	p.run(a, sc.OnEnter, &evalScope{app: a})
	p.changed()
}

// back handles BACK: dismiss keyboard, dialog, pop a screen, or leave.
func (p *Phone) back() {
	a := p.apps[p.fg]
	if a == nil {
		return
	}
	if p.inOverview {
		p.inOverview = false
		p.changed()
		return
	}
	if p.keyboardShown() {
		p.hideIME(a)
		return
	}
	switch {
	case a.dialog != nil:
		if a.dialog.spec.Cancel {
			a.dialog, a.focus = nil, ""
		}
	case len(a.stack) > 1:
		a.stack, a.focus = a.stack[:len(a.stack)-1], ""
		a.scroll = map[string]int{}
	case p.fg != Launcher:
		a.focus = ""
		// The root activity finishes; the process lingers but a later launch
		// starts from the first screen, as Android does after BACK.
		a.stack = nil
		p.toForeground(Launcher)
	}
	p.changed()
}

func (p *Phone) home() {
	if a := p.apps[p.fg]; a != nil {
		a.focus = ""
	}
	l := p.apps[Launcher]
	if len(l.stack) > 1 {
		l.stack = l.stack[:1]
	}
	p.toForeground(Launcher)
}

// crash kills the foreground app the way an uncaught exception does.
func (p *Phone) crash(a *appRun, msg string) {
	if msg == "" || msg == "true" {
		msg = "java.lang.RuntimeException: simulated crash"
	}
	if !strings.Contains(msg, "Exception") && !strings.Contains(msg, "Error") {
		msg = "java.lang.IllegalStateException: " + msg
	}
	pkg := a.spec.Package
	l := p.logcat
	l.add(a.pid, "E", "AndroidRuntime", "FATAL EXCEPTION: main")
	l.add(a.pid, "E", "AndroidRuntime", fmt.Sprintf("Process: %s, PID: %d", pkg, a.pid))
	l.add(a.pid, "E", "AndroidRuntime", msg)
	act := p.activity(a)
	cls := pkg + act
	if !strings.HasPrefix(act, ".") {
		cls = act
	}
	l.add(a.pid, "E", "AndroidRuntime", fmt.Sprintf("\tat %s.onClick(%s.java:%d)", cls, act[strings.LastIndex(act, ".")+1:], 40+len(msg)%60))
	l.add(a.pid, "E", "AndroidRuntime", "\tat android.view.View.performClick(View.java:7659)")
	l.add(a.pid, "E", "AndroidRuntime", "\tat android.os.Handler.handleCallback(Handler.java:958)")
	l.add(a.pid, "E", "AndroidRuntime", "\tat com.android.internal.os.ZygoteInit.main(ZygoteInit.java:1042)")
	l.add(1000, "W", "ActivityTaskManager", fmt.Sprintf("  Force finishing activity %s/%s", pkg, act))
	l.add(1000, "I", "ActivityManager", fmt.Sprintf("Process %s (pid %d) has died: fg  TOP ", pkg, a.pid))
	p.kill(a)
	p.showToast(a.spec.Label + " keeps stopping")
}

func (p *Phone) showToast(text string) {
	p.toast = text
	p.toastEnd = p.clock.Now().Add(2 * time.Second)
	p.changed()
}

// tick applies what time did: due popups open, toasts end. It returns a key
// that changes whenever time alone changes the screen.
func (p *Phone) tick() (now time.Time) {
	now = p.clock.Now()
	if p.toast != "" && !now.Before(p.toastEnd) {
		p.toast = ""
		p.changed()
	}
	if a := p.apps[p.fg]; a != nil {
		if t := a.top(); t != nil && t.popup != "" && !now.Before(t.popupAt) {
			if d := a.dialogSpec(t.popup); d != nil && a.dialog == nil {
				a.dialog = &dialogRun{spec: d, scope: &evalScope{app: a}}
				a.focus = ""
			}
			t.popup = ""
			p.changed()
		}
	}
	return now
}

func (p *Phone) wake() {
	if !p.awake {
		p.awake = true
		p.changed()
	}
}
