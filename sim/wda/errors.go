package wda

import (
	"fmt"
	"net/http"
)

// Error is a W3C WebDriver error as WebDriverAgent sends it:
// {"value": {"error": Code, "message": Message, "traceback": ""}} with the
// code's HTTP status.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return "wda: " + e.Code + ": " + e.Message }

func newErr(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// The W3C error codes the server sends, with their HTTP statuses.
func errInvalidArgument(format string, args ...any) *Error {
	return newErr(http.StatusBadRequest, "invalid argument", format, args...)
}

func errInvalidSelector(format string, args ...any) *Error {
	return newErr(http.StatusBadRequest, "invalid selector", format, args...)
}

func errNoSuchElement(format string, args ...any) *Error {
	return newErr(http.StatusNotFound, "no such element", format, args...)
}

func errStale(format string, args ...any) *Error {
	return newErr(http.StatusNotFound, "stale element reference", format, args...)
}

func errNoSuchAlert() *Error {
	return newErr(http.StatusNotFound, "no such alert", "An attempt was made to operate on a modal dialog when one was not open")
}

func errInvalidSession(id string) *Error {
	return newErr(http.StatusNotFound, "invalid session id", "Session does not exist: %q", id)
}

func errUnknownCommand(method, path string) *Error {
	return newErr(http.StatusNotFound, "unknown command", "Unhandled endpoint: %s %s", method, path)
}

func errInvalidState(format string, args ...any) *Error {
	return newErr(http.StatusBadRequest, "invalid element state", format, args...)
}

func errUnknown(format string, args ...any) *Error {
	return newErr(http.StatusInternalServerError, "unknown error", format, args...)
}
