package wda

import (
	"encoding/json"
	"errors"
	"math"
	"strings"

	"github.com/apexagent/apex/sim"
)

// bundleOnScreen is the bundle id of the app on screen (SpringBoard for
// the home and lock screens).
func (s *Server) bundleOnScreen() string {
	pkg, _ := s.phone.Foreground()
	if pkg == "" || pkg == sim.Launcher || s.phone.Locked() || !s.phone.Awake() {
		return sim.SpringBoard
	}
	return pkg
}

func (s *Server) labelOf(bundle string) string {
	if bundle == sim.SpringBoard {
		return "SpringBoard"
	}
	for _, p := range s.phone.Packages() {
		if p.Name == bundle {
			return p.Label
		}
	}
	return ""
}

// pkgOf maps a bundle id onto the phone's package.
func pkgOf(bundle string) string {
	if bundle == sim.SpringBoard {
		return sim.Launcher
	}
	return bundle
}

func (s *Server) launch(bundle string) error {
	if bundle == "" {
		return errInvalidArgument("'bundleId' must not be empty")
	}
	if !s.phone.AppStatus(pkgOf(bundle)).Installed {
		return errUnknown("The application under test with bundle id '%s' is not installed on the device", bundle)
	}
	if s.phone.Locked() {
		s.phone.Unlock()
	}
	if err := s.phone.Launch(pkgOf(bundle)); err != nil {
		return errUnknown("%v", err)
	}
	return nil
}

// coldLaunch terminates a running app and starts it afresh, as
// WebDriverAgent does for a session with a bundle id and for
// /wda/apps/launch (/wda/apps/activate only brings it to the front).
func (s *Server) coldLaunch(bundle string) error {
	if bundle != sim.SpringBoard && s.phone.AppStatus(pkgOf(bundle)).Running {
		s.phone.ForceStop(pkgOf(bundle))
	}
	return s.launch(bundle)
}

func (s *Server) bundleArg(q *request) (string, error) {
	b, err := q.str("bundleId")
	if err != nil {
		return "", err
	}
	if b == "" {
		return "", errInvalidArgument("'bundleId' must not be empty")
	}
	return b, nil
}

func (s *Server) appLaunch(q *request) (any, error) {
	b, err := s.bundleArg(q)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"arguments", "environment"} {
		if raw, ok := q.body[k]; ok && string(raw) != "null" {
			var v any
			if json.Unmarshal(raw, &v) != nil {
				return nil, errInvalidArgument("'%s' is not valid JSON", k)
			}
		}
	}
	return nil, s.coldLaunch(b)
}

func (s *Server) appActivate(q *request) (any, error) {
	b, err := s.bundleArg(q)
	if err != nil {
		return nil, err
	}
	return nil, s.launch(b)
}

// appTerminate answers true when the app was running.
func (s *Server) appTerminate(q *request) (any, error) {
	b, err := s.bundleArg(q)
	if err != nil {
		return nil, err
	}
	st := s.phone.AppStatus(pkgOf(b))
	if !st.Installed {
		return nil, errUnknown("The application with bundle id '%s' is not installed on the device", b)
	}
	if b == sim.SpringBoard || !st.Running {
		return false, nil
	}
	s.phone.ForceStop(b)
	return true, nil
}

// XCUIApplicationState values.
const (
	stateUnknown           = 0
	stateNotRunning        = 1
	stateRunningBackground = 3
	stateRunningForeground = 4
)

func (s *Server) appState(q *request) (any, error) {
	b, err := s.bundleArg(q)
	if err != nil {
		return nil, err
	}
	if b == sim.SpringBoard {
		return stateRunningForeground, nil
	}
	st := s.phone.AppStatus(b)
	switch {
	case !st.Installed:
		return stateUnknown, nil
	case st.Foreground:
		return stateRunningForeground, nil
	case st.Running:
		return stateRunningBackground, nil
	}
	return stateNotRunning, nil
}

func (s *Server) activeAppInfo(*request) (any, error) {
	b := s.bundleOnScreen()
	st := s.phone.AppStatus(pkgOf(b))
	return map[string]any{"bundleId": b, "name": "", "pid": st.PID,
		"processArguments": map[string]any{"env": map[string]any{}, "args": []any{}}}, nil
}

func (s *Server) homescreen(*request) (any, error) {
	if s.phone.Locked() || !s.phone.Awake() {
		return nil, errUnknown("Cannot open the home screen while the device is locked: unlock it first (POST /wda/unlock)")
	}
	s.phone.KeyEvent(sim.KeycodeHome)
	return nil, nil
}

func (s *Server) lock(*request) (any, error) {
	s.phone.Lock()
	return nil, nil
}

func (s *Server) unlock(*request) (any, error) {
	s.phone.Unlock()
	return nil, nil
}

func (s *Server) locked(*request) (any, error) { return s.phone.Locked(), nil }

// buttons are the hardware buttons /wda/pressButton knows.
var buttons = map[string]int{"home": sim.KeycodeHome, "volumeup": sim.KeycodeVolumeUp, "volumedown": sim.KeycodeVolumeDown}

func (s *Server) pressButton(q *request) (any, error) {
	name, err := q.str("name")
	if err != nil {
		return nil, err
	}
	code, ok := buttons[strings.ToLower(name)]
	if !ok {
		return nil, errInvalidArgument("The button '%s' is unknown. Only the following button names are supported: home, volumeUp, volumeDown", name)
	}
	if code == sim.KeycodeHome && !s.phone.Awake() {
		// Home wakes a dark screen onto the lock screen.
		s.phone.KeyEvent(sim.KeycodeWakeup)
		return nil, nil
	}
	s.phone.KeyEvent(code)
	return nil, nil
}

// keys answers POST /wda/keys {"value": ["h", "i"]}: typing into the
// focused field. "\b" deletes, "\n" and "\r" press Return.
func (s *Server) keys(q *request) (any, error) {
	raw, ok := q.body["value"]
	if !ok {
		return nil, errInvalidArgument("'value' is required: an array of strings to type")
	}
	var parts []string
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, errInvalidArgument("'value' must be an array of strings, got %s", short(raw))
	}
	if _, err := q.optNum("frequency", 60); err != nil {
		return nil, err
	}
	return nil, s.typeText(strings.Join(parts, ""))
}

func (s *Server) typeText(text string) error {
	if text == "" {
		return nil
	}
	if !s.phone.KeyboardShown() {
		return errInvalidState("The on-screen keyboard must be present to send keys: tap a text field first")
	}
	var run strings.Builder
	flush := func() {
		if run.Len() > 0 {
			s.phone.InputText(run.String())
			run.Reset()
		}
	}
	for _, r := range text {
		switch r {
		case '\b', 0x7f, '\uE003':
			flush()
			s.phone.KeyEvent(sim.KeycodeDel)
		case '\n', '\r', '\uE006', '\uE007':
			flush()
			s.phone.KeyEvent(sim.KeycodeEnter)
		default:
			run.WriteRune(r)
		}
	}
	flush()
	return nil
}

func (s *Server) dismissKeyboard(*request) (any, error) {
	if !s.phone.KeyboardShown() {
		return nil, errInvalidState("The keyboard is not present and cannot be dismissed")
	}
	s.phone.HideKeyboard()
	return nil, nil
}

// Alerts: the phone's dialogs.

func (s *Server) alertText(*request) (any, error) {
	al, err := s.phone.Alert()
	if err != nil {
		return nil, errNoSuchAlert()
	}
	var lines []string
	for _, t := range []string{al.Title, al.Text} {
		if t != "" {
			lines = append(lines, t)
		}
	}
	return strings.Join(lines, "\n"), nil
}

func (s *Server) alertButtons(*request) (any, error) {
	al, err := s.phone.Alert()
	if err != nil {
		return nil, errNoSuchAlert()
	}
	return al.Buttons, nil
}

func (s *Server) alertAccept(q *request) (any, error) { return s.answerAlert(q, true) }

func (s *Server) alertDismiss(q *request) (any, error) { return s.answerAlert(q, false) }

func (s *Server) answerAlert(q *request, accept bool) (any, error) {
	name, err := q.optStr("name")
	if err != nil {
		return nil, err
	}
	switch {
	case name != "":
		err = s.phone.PressAlertButton(name)
		if err != nil && !errors.Is(err, sim.ErrNoAlert) {
			return nil, errInvalidArgument("%v", err)
		}
	case accept:
		err = s.phone.AcceptAlert()
	default:
		err = s.phone.DismissAlert()
	}
	if errors.Is(err, sim.ErrNoAlert) {
		return nil, errNoSuchAlert()
	}
	return nil, err
}

// px converts a coordinate in points to pixels.
func (s *Server) px(v float64) int { return int(math.Round(v * float64(s.scale()))) }
