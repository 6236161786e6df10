//go:build !unix

package store

import "errors"

// processStart is unknown here.
func processStart(pid int) (int64, error) { return 0, errors.ErrUnsupported }

// processState cannot tell here: runs are never marked lost.
func processState(pid int) (alive bool, start int64, known bool) { return false, 0, false }
