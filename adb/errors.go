// Package adb speaks the Android Debug Bridge wire protocol: the adb
// server's smart-socket protocol (host services, transports) and, with no
// server at all, the device protocol to an adbd over TCP. On top of either it
// runs shell (v1 and v2), exec and sync services.
package adb

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrGone means the device is not reachable: the server does not know it,
	// reports it offline, or the transport dropped. Callers may retry.
	ErrGone = errors.New("adb: device not reachable")
	// ErrUnauthorized means the device has not accepted this host's key.
	ErrUnauthorized = errors.New("adb: device unauthorized")
	// ErrProtocol means the peer sent something this client cannot parse.
	ErrProtocol = errors.New("adb: protocol error")
	// ErrNoServer means no adb server answers at the address.
	ErrNoServer = errors.New("adb: no adb server")
)

// ServerError is a FAIL reply of the adb server to a request.
type ServerError struct {
	Request string
	Message string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("adb server refused %q: %s", e.Request, e.Message)
}

// Is lets callers match the device states the server reports in prose.
func (e *ServerError) Is(target error) bool {
	m := strings.ToLower(e.Message)
	switch target {
	case ErrGone:
		return strings.Contains(m, "not found") || strings.Contains(m, "offline") ||
			strings.Contains(m, "no devices") || strings.Contains(m, "closed")
	case ErrUnauthorized:
		return strings.Contains(m, "unauthorized")
	}
	return false
}

// ShellError reports a shell command that exited with a non-zero status.
type ShellError struct {
	Command string
	Exit    int
	Stderr  string
}

func (e *ShellError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("shell %q exited with status %d", e.Command, e.Exit)
	}
	return fmt.Sprintf("shell %q exited with status %d: %s", e.Command, e.Exit, msg)
}

// OpenError reports a service that could not be opened, so callers know the
// command never reached the device and may safely retry it.
type OpenError struct {
	Service string
	Err     error
}

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }
