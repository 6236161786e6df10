package wda

import (
	"errors"
	"fmt"
	"strings"
)

// Errors WebDriverAgent reports, matched with errors.Is against an *Error.
// The W3C error code decides; legacy (JSON Wire) numeric statuses of older
// WebDriverAgent builds map onto the same sentinels.
var (
	ErrNoSuchElement     = errors.New("no such element")
	ErrStaleElement      = errors.New("stale element reference")
	ErrInvalidSession    = errors.New("invalid session id")
	ErrNoAlert           = errors.New("no such alert")
	ErrAlertOpen         = errors.New("unexpected alert open")
	ErrInvalidArgument   = errors.New("invalid argument")
	ErrInvalidSelector   = errors.New("invalid selector")
	ErrUnknownCommand    = errors.New("unknown command")
	ErrUnknownMethod     = errors.New("unknown method")
	ErrTimeout           = errors.New("timeout")
	ErrElementState      = errors.New("invalid element state")
	ErrNotInteractable   = errors.New("element not interactable")
	ErrSessionNotCreated = errors.New("session not created")
	ErrUnsupported       = errors.New("unsupported operation")
	ErrUnknown           = errors.New("unknown error")
	// ErrAppNotInstalled is an unknown error whose message says the
	// bundle id names no installed app.
	ErrAppNotInstalled = errors.New("app not installed")
	// ErrUnreachable means no HTTP answer came: nothing listens at the URL,
	// the connection dropped, or WebDriverAgent is restarting.
	ErrUnreachable = errors.New("WebDriverAgent not reachable")
	// ErrBadResponse means the answer was not WebDriverAgent's JSON.
	ErrBadResponse = errors.New("malformed WebDriverAgent response")
)

// codes maps W3C error codes to sentinels.
var codes = map[string]error{
	"no such element":          ErrNoSuchElement,
	"stale element reference":  ErrStaleElement,
	"invalid session id":       ErrInvalidSession,
	"no such alert":            ErrNoAlert,
	"unexpected alert open":    ErrAlertOpen,
	"invalid argument":         ErrInvalidArgument,
	"invalid selector":         ErrInvalidSelector,
	"unknown command":          ErrUnknownCommand,
	"unknown method":           ErrUnknownMethod,
	"timeout":                  ErrTimeout,
	"invalid element state":    ErrElementState,
	"element not interactable": ErrNotInteractable,
	"element not visible":      ErrNotInteractable,
	"session not created":      ErrSessionNotCreated,
	"unsupported operation":    ErrUnsupported,
	"unknown error":            ErrUnknown,
}

// legacyStatus maps JSON Wire Protocol statuses (WebDriverAgent before
// its W3C switch) to W3C codes.
var legacyStatus = map[int]string{
	6: "invalid session id", 7: "no such element", 9: "unknown command",
	10: "stale element reference", 11: "element not interactable",
	12: "invalid element state", 13: "unknown error", 21: "timeout",
	26: "unexpected alert open", 27: "no such alert", 32: "invalid selector",
	33: "session not created", 61: "invalid argument",
}

// Error is an error WebDriverAgent answered with.
type Error struct {
	Op         string // "POST /session/…/element"
	HTTPStatus int
	Code       string // W3C error code, e.g. "no such element"
	Message    string
	Traceback  string
}

func (e *Error) Error() string {
	msg := e.Message
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" || msg == e.Code {
		return fmt.Sprintf("wda: %s: %s", e.Op, e.Code)
	}
	return fmt.Sprintf("wda: %s: %s: %s", e.Op, e.Code, msg)
}

// Is matches the sentinel of e's code, and ErrAppNotInstalled for the
// messages WebDriverAgent gives a bundle id it cannot find.
func (e *Error) Is(target error) bool {
	if target == ErrAppNotInstalled {
		return appMissing(e.Message)
	}
	s, ok := codes[e.Code]
	return ok && s == target
}

// appMissing recognises the wording XCTest and WebDriverAgent use for an
// app that is not installed, across versions.
func appMissing(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"not installed", "cannot launch", "failed to launch", "unable to launch", "no application", "is not found", "does not exist", "invalid bundle"} {
		if strings.Contains(m, s) && (strings.Contains(m, "app") || strings.Contains(m, "bundle")) {
			return true
		}
	}
	return false
}
