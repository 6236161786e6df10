package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNoAlert is returned when no dialog is open.
var ErrNoAlert = errors.New("no alert is open")

// AppStatus is what the phone knows of one app's process.
type AppStatus struct {
	Installed  bool
	Running    bool
	Foreground bool
	PID        int
}

// AppStatus reports whether pkg is installed, running and on screen.
func (p *Phone) AppStatus(pkg string) AppStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	pkg = p.resolve(pkg)
	a, ok := p.apps[pkg]
	if !ok {
		return AppStatus{}
	}
	return AppStatus{Installed: true, Running: a.running, PID: a.pid,
		Foreground: a.running && p.fg == pkg && p.awake && !p.locked}
}

// Alert is an open dialog as an iOS alert: its title, message and
// buttons in reading order.
type Alert struct {
	Title, Text string
	Buttons     []string
}

// Alert returns the open dialog, or ErrNoAlert.
func (p *Phone) Alert() (Alert, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, al, err := p.alert()
	return al, err
}

func (p *Phone) alert() ([]*view, Alert, error) {
	if !p.awake || p.locked {
		return nil, Alert{}, ErrNoAlert
	}
	L := p.layout()
	if L.dialog == nil {
		return nil, Alert{}, ErrNoAlert
	}
	a := p.apps[p.fg]
	d := a.dialog
	s := d.scope
	if s == nil {
		s = &evalScope{app: a}
	}
	al := Alert{Title: render(d.spec.Title, s), Text: render(d.spec.Text, s)}
	var buttons []*view
	L.dialog.walk(func(v *view) bool {
		if v.tap != nil && (v.kind == "button" || v.kind == "icon") {
			buttons = append(buttons, v)
		}
		return true
	})
	slices.SortStableFunc(buttons, func(x, y *view) int {
		if x.r.Min.Y != y.r.Min.Y {
			return x.r.Min.Y - y.r.Min.Y
		}
		return x.r.Min.X - y.r.Min.X
	})
	// The corner close icon sits above the buttons; read the row of
	// buttons first, as VoiceOver does an alert's actions.
	slices.SortStableFunc(buttons, func(x, y *view) int {
		return boolInt(x.kind == "icon") - boolInt(y.kind == "icon")
	})
	for _, b := range buttons {
		al.Buttons = append(al.Buttons, buttonLabel(b))
	}
	return buttons, al, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func buttonLabel(v *view) string {
	if v.text != "" {
		return v.text
	}
	return v.desc
}

// PressAlertButton taps the open dialog's button labelled label (any case).
func (p *Phone) PressAlertButton(label string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	buttons, al, err := p.alert()
	if err != nil {
		return err
	}
	for _, b := range buttons {
		if strings.EqualFold(buttonLabel(b), label) {
			c := b.r.Min.Add(b.r.Max).Div(2)
			p.tap(c.X, c.Y, false)
			return nil
		}
	}
	return fmt.Errorf("sim: alert %q has no button %q (buttons: %s)", al.Title, label, strings.Join(al.Buttons, ", "))
}

// AcceptAlert taps the alert's default button: the last of its row (OK,
// Allow, Remove). DismissAlert taps the first (Cancel), or closes an alert
// that can be cancelled and has a single button.
func (p *Phone) AcceptAlert() error { return p.answerAlert(true) }

// DismissAlert: see AcceptAlert.
func (p *Phone) DismissAlert() error { return p.answerAlert(false) }

func (p *Phone) answerAlert(accept bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	buttons, _, err := p.alert()
	if err != nil {
		return err
	}
	var row []*view
	for _, b := range buttons {
		if b.kind == "button" {
			row = append(row, b)
		}
	}
	a := p.apps[p.fg]
	var target *view
	switch {
	case accept && len(row) > 0:
		target = row[len(row)-1]
	case !accept && len(row) > 1:
		target = row[0]
	case !accept && a.dialog.spec.Cancel:
		a.dialog = nil
		p.changed()
		return nil
	case len(row) > 0:
		target = row[0]
	case len(buttons) > 0:
		target = buttons[0]
	default:
		a.dialog = nil
		p.changed()
		return nil
	}
	c := target.r.Min.Add(target.r.Max).Div(2)
	p.tap(c.X, c.Y, false)
	return nil
}

// ClearText empties the focused text field. It reports whether one was
// focused.
func (p *Phone) ClearText() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.awake || p.locked {
		return false
	}
	f := focusedField(p.layout())
	if f == nil {
		return false
	}
	if f.text() != "" {
		p.setFieldText(f, "")
	}
	return true
}

// HideKeyboard drops the focus, and with it the keyboard.
func (p *Phone) HideKeyboard() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a := p.apps[p.fg]; a != nil && a.focus != "" {
		a.focus = ""
		p.changed()
	}
}
