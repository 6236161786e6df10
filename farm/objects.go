package farm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ObjectStore opens an object-store bucket, creating it on first use with as
// many replicas as the farm's other assets: stores made per project (run
// records, app artifacts) cannot be provisioned ahead. A cluster busy
// electing leaders is asked again for up to objectStoreWait; a connection
// whose permissions deny the bucket fails at once, with an error wrapping
// nats.ErrPermissionViolation.
func ObjectStore(ctx context.Context, js jetstream.JetStream, bucket, description string) (jetstream.ObjectStore, error) {
	return openObjectStore(ctx, js, bucket, description, true)
}

// ExistingObjectStore is ObjectStore for readers: it creates nothing, and
// a bucket that does not exist fails at once with an error wrapping
// jetstream.ErrBucketNotFound.
func ExistingObjectStore(ctx context.Context, js jetstream.JetStream, bucket string) (jetstream.ObjectStore, error) {
	return openObjectStore(ctx, js, bucket, "", false)
}

func openObjectStore(ctx context.Context, js jetstream.JetStream, bucket, description string, create bool) (obs jetstream.ObjectStore, err error) {
	rctx, cancel := context.WithTimeout(ctx, objectStoreWait)
	defer cancel()
	err = Retry(rctx, func(ctx context.Context) error {
		dctx, denied := WatchDenied(ctx, js.Conn(), "OBJ_"+bucket)
		if create {
			obs, err = objectStore(dctx, js, bucket, description)
		} else if obs, err = js.ObjectStore(dctx, bucket); errors.Is(err, jetstream.ErrBucketNotFound) {
			err = Permanent(fmt.Errorf("farm: object store %s: %w", bucket, err))
		}
		if d := denied(); d != nil {
			return Permanent(fmt.Errorf("farm: object store %s: %w (your token's role or projects do not allow it: ask an admin)", bucket, d))
		}
		return err
	})
	return obs, err
}

// WatchDenied returns ctx canceled as soon as the server tells nc it may
// not publish to a subject containing what — NATS answers a denied
// request with an error on the connection, not to the request, which
// would otherwise wait for its timeout — and a func that ends the watch
// and returns that error, if any.
func WatchDenied(ctx context.Context, nc *nats.Conn, what string) (context.Context, func() error) {
	ctx, cancel := context.WithCancelCause(ctx)
	before := nc.LastError()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := nc.LastError(); err != before && errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), what) {
					cancel(err)
					return
				}
			}
		}
	}()
	return ctx, func() error {
		close(done)
		err := context.Cause(ctx)
		cancel(nil)
		if errors.Is(err, nats.ErrPermissionViolation) {
			return err
		}
		return nil
	}
}

// objectStoreWait bounds how long ObjectStore keeps asking.
const objectStoreWait = time.Minute

func objectStore(ctx context.Context, js jetstream.JetStream, bucket, description string) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, bucket)
	if err == nil || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return obs, err
	}
	replicas := 1
	if kv, err := js.KeyValue(ctx, BucketConfig); err == nil {
		if st, err := kv.Status(ctx); err == nil {
			if s, ok := st.(*jetstream.KeyValueBucketStatus); ok {
				replicas = max(1, s.Config().Replicas)
			}
		}
	}
	obs, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: bucket, Description: description, Replicas: replicas})
	if errors.Is(err, jetstream.ErrBucketExists) {
		return js.ObjectStore(ctx, bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("farm: object store %s: %w", bucket, err)
	}
	return obs, nil
}
