package farm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ObjectStore opens an object-store bucket, creating it on first use with as
// many replicas as the farm's other assets: stores made per project (run
// records) cannot be provisioned ahead. A cluster busy electing leaders
// is asked again for up to objectStoreWait.
func ObjectStore(ctx context.Context, js jetstream.JetStream, bucket, description string) (obs jetstream.ObjectStore, err error) {
	rctx, cancel := context.WithTimeout(ctx, objectStoreWait)
	defer cancel()
	err = Retry(rctx, func(ctx context.Context) error {
		obs, err = objectStore(ctx, js, bucket, description)
		return err
	})
	return obs, err
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
