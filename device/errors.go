package device

import "errors"

var (
	// ErrOffline means the device cannot be reached: it was unplugged, its
	// transport dropped, or it stopped answering within the deadline.
	ErrOffline = errors.New("device offline")
	// ErrNotFound means no device, app or element matches what was asked for.
	ErrNotFound = errors.New("not found")
	// ErrUnsupported means the device or platform cannot do what was asked.
	ErrUnsupported = errors.New("not supported")
)
