//go:build !unix

package lease

import (
	"context"
	"os"
)

// acquire is a no-op where flock is missing: a lease then holds nothing,
// and faces in other processes are not kept off the device.
func acquire(ctx context.Context, id string, o *Options) (*Lease, error) { return &Lease{}, nil }

// privateDir makes dir; ownership is not checked where flock is missing.
func privateDir(dir string) error { return os.MkdirAll(dir, 0o700) }
