// Package farm names the NATS JetStream assets a device farm keeps its state
// in (buckets, streams, subjects) and creates them; the subpackages build
// the control plane, registry, leases, run queue and host agent on them.
package farm

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/crypto/bcrypt"
)

// The farm's buckets and streams.
const (
	BucketHosts   = "farm_hosts"   // host ID → registry.Host, expires without heartbeat
	BucketDevices = "farm_devices" // device key → registry.Device, expires without heartbeat
	BucketLeases  = "farm_leases"  // resource key → lease.Record, expires without renewal
	BucketRuns    = "farm_runs"    // run ID → queue.Run, moved between states by CAS
	BucketConfig  = "farm_config"  // project limits and other settings
	BucketAuth    = "farm_auth"    // users, projects, tokens (as hashes)
	StreamRuns    = "FARM_RUNS"    // work queue: runs.pool.<platform>
	StreamEvents  = "FARM_EVENTS"  // events.<runID>.<kind>
	StreamAudit   = "FARM_AUDIT"   // audit.<kind>
)

// Config is the shape of a farm's assets. Zero values mean the defaults.
type Config struct {
	// Replicas of every stream and bucket: 1 on one machine, 3 in a
	// three-node cluster (quorum 2).
	Replicas int
	// HeartbeatTTL is how long a host or device stays registered without a
	// heartbeat (default 15s); hosts beat every third of it.
	HeartbeatTTL time.Duration
	// LeaseTTL is how long a lease lives without renewal (default 30s);
	// holders renew every third of it. Whole seconds, 1s at least.
	LeaseTTL time.Duration
}

func (c Config) withDefaults() Config {
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	if c.HeartbeatTTL <= 0 {
		c.HeartbeatTTL = 15 * time.Second
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 30 * time.Second
	}
	// The server keeps TTLs in whole seconds.
	c.HeartbeatTTL = max(time.Second, c.HeartbeatTTL.Round(time.Second))
	c.LeaseTTL = max(time.Second, c.LeaseTTL.Round(time.Second))
	return c
}

// Provision creates or updates every asset of the farm. It is idempotent:
// each control-plane member calls it at start. In a cluster that is still
// forming it retries until ctx ends.
func Provision(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	c := cfg.withDefaults()
	kvs := []jetstream.KeyValueConfig{
		{Bucket: BucketHosts, TTL: c.HeartbeatTTL, LimitMarkerTTL: time.Minute, History: 1, Replicas: c.Replicas},
		{Bucket: BucketDevices, TTL: c.HeartbeatTTL, LimitMarkerTTL: time.Minute, History: 1, Replicas: c.Replicas},
		{Bucket: BucketLeases, TTL: c.LeaseTTL, LimitMarkerTTL: time.Minute, History: 1, Replicas: c.Replicas},
		{Bucket: BucketRuns, History: 1, Replicas: c.Replicas},
		{Bucket: BucketConfig, History: 1, Replicas: c.Replicas},
		{Bucket: BucketAuth, History: 1, Replicas: c.Replicas},
	}
	streams := []jetstream.StreamConfig{
		{Name: StreamRuns, Subjects: []string{"runs.>"}, Retention: jetstream.WorkQueuePolicy,
			Duplicates: 2 * time.Minute, Replicas: c.Replicas},
		{Name: StreamEvents, Subjects: []string{"events.>"}, Retention: jetstream.LimitsPolicy,
			MaxAge: 7 * 24 * time.Hour, MaxBytes: 1 << 30, Replicas: c.Replicas},
		{Name: StreamAudit, Subjects: []string{"audit.>"}, Retention: jetstream.LimitsPolicy,
			MaxAge: 90 * 24 * time.Hour, MaxBytes: 1 << 30, Replicas: c.Replicas},
	}
	return Retry(ctx, func(ctx context.Context) error {
		for _, k := range kvs {
			if _, err := js.CreateOrUpdateKeyValue(ctx, k); err != nil {
				return fmt.Errorf("farm: bucket %s: %w", k.Bucket, err)
			}
		}
		for _, s := range streams {
			if _, err := js.CreateOrUpdateStream(ctx, s); err != nil {
				return fmt.Errorf("farm: stream %s: %w", s.Name, err)
			}
		}
		for _, p := range []string{"android", "ios"} {
			if _, err := js.CreateOrUpdateConsumer(ctx, StreamRuns, PoolConsumer(p)); err != nil {
				return fmt.Errorf("farm: consumer of the %s pool: %w", p, err)
			}
		}
		return nil
	})
}

// PoolSubject is where runs for devices of a platform are queued.
func PoolSubject(platform string) string { return "runs.pool." + platform }

// PoolConsumer is the one durable pull consumer of a platform's pool; every
// host serving that platform fetches from it. A run is acked as soon as its
// state in BucketRuns says who leased it, so AckWait only covers the step
// from fetch to lease.
func PoolConsumer(platform string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{Durable: "pool-" + platform, FilterSubject: PoolSubject(platform),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second, MaxAckPending: 10000}
}

// Retry calls f until it succeeds or ctx ends; a JetStream cluster answers
// "no leader" or times out while it elects one. An error f marks
// Permanent ends it at once.
func Retry(ctx context.Context, f func(context.Context) error) error {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		if p := (permanent{}); errors.As(err, &p) {
			return p.error
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// Permanent marks an error that trying again does not mend (a refusal):
// Retry returns it (unmarked) at once.
func Permanent(err error) error { return permanent{err} }

type permanent struct{ error }

// keyEncoding keeps any device ID or serial (with ':' or '/') inside the
// characters KV keys allow, one subject token long.
var keyEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

// Key turns a name (a device ID, a serial) into a KV key.
func Key(name string) string { return strings.ToLower(keyEncoding.EncodeToString([]byte(name))) }

// ConnectOptions say how a client reaches the farm.
type ConnectOptions struct {
	// URL is one or more comma-separated NATS URLs of the control plane.
	URL string
	// Token authenticates to a control plane started with --token; Creds
	// is a NATS credentials file for an existing NATS deployment.
	Token, Creds string
	// Name is the client's name in the server's connection list.
	Name string
	// CA is a PEM file of the certificate (or its issuer's) of a control
	// plane that serves TLS with one the system does not trust.
	CA string
}

// InboxPrefix is where the answers to a connection with token arrive: a
// user's connection may subscribe to its own inbox only (see the plane's
// permissions), so it sees no one else's answers nor the farm's messages.
func InboxPrefix(token string) string {
	sum := sha256.Sum256([]byte("apex-farm-inbox:" + token))
	return "_INBOX_" + hex.EncodeToString(sum[:12])
}

// Connect dials the control plane; it keeps reconnecting (to any member of
// a cluster) until closed.
func Connect(o ConnectOptions) (*nats.Conn, jetstream.JetStream, error) {
	if o.URL == "" {
		return nil, nil, errors.New("farm: no control plane URL: give --farm nats://HOST:4222 (the address apex farm serve prints)")
	}
	// A plane keeping its token's hash spends a bcrypt check on each
	// login: allow for it on a busy machine.
	opts := []nats.Option{nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(10 * time.Second)}
	if o.Token != "" {
		opts = append(opts, nats.UserInfo(User, o.Token), nats.CustomInboxPrefix(InboxPrefix(o.Token)))
	}
	if o.Creds != "" {
		opts = append(opts, nats.UserCredentials(o.Creds))
	}
	if o.CA != "" {
		opts = append(opts, nats.RootCAs(o.CA))
	}
	nc, err := nats.Connect(o.URL, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("farm: connect to %s: %w (is apex farm serve running there? is --token right?)", o.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// Conflict reports whether err is a compare-and-swap that lost: the key
// changed since the revision the writer read.
func Conflict(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Every calls f every interval until ctx ends.
func Every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// LeaderGet reads key of a KV bucket from the bucket's leader. KV Get may
// be answered by any replica, and one that lags returns what a writer has
// already replaced: a compare-and-swap would then fail on a state the
// writer just set, and a lease just taken would look free. ok is false when
// the key is absent, deleted or expired.
//
// Each try is bounded by leaderReadTimeout and tried again until ctx ends:
// only the leader answers, so a request sent while a dead leader is not yet
// replaced, or lost with the member that took it, is never answered, and a
// caller without a deadline (a host's worker, the reaper) would wait
// forever: a cluster that lost a member had runs that never ended.
func LeaderGet(ctx context.Context, js jetstream.JetStream, bucket, key string) (data []byte, rev uint64, ok bool, err error) {
	for {
		tctx, cancel := context.WithTimeout(ctx, leaderReadTimeout)
		data, rev, ok, err = leaderGet(tctx, js, bucket, key)
		cancel()
		if err == nil || ctx.Err() != nil || !unanswered(err) {
			return data, rev, ok, err
		}
		Sleep(ctx, 100*time.Millisecond)
	}
}

// leaderReadTimeout bounds one try of LeaderGet.
const leaderReadTimeout = 3 * time.Second

// jsClusterNotAvailable is JetStream's answer while a stream has no leader.
const jsClusterNotAvailable = 10008

// unanswered reports whether a request to JetStream failed for want of a
// leader, so that the same request may be sent again.
func unanswered(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jsClusterNotAvailable
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders)
}

func leaderGet(ctx context.Context, js jetstream.JetStream, bucket, key string) (data []byte, rev uint64, ok bool, err error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": "$KV." + bucket + "." + key})
	m, err := js.Conn().RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+bucket, req)
	if err != nil {
		return nil, 0, false, fmt.Errorf("farm: read %s from %s: %w", key, bucket, err)
	}
	var resp struct {
		Message *struct {
			Seq  uint64 `json:"seq"`
			Data []byte `json:"data"`
			Hdrs []byte `json:"hdrs"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return nil, 0, false, fmt.Errorf("farm: read %s from %s: %w", key, bucket, err)
	}
	if resp.Error != nil {
		if resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound {
			return nil, 0, false, nil
		}
		return nil, 0, false, fmt.Errorf("farm: read %s from %s: %w", key, bucket, resp.Error)
	}
	if resp.Message == nil {
		return nil, 0, false, nil
	}
	if len(resp.Message.Hdrs) > 0 {
		// A delete, purge or expiry marker.
		if h, err := nats.DecodeHeadersMsg(resp.Message.Hdrs); err == nil &&
			(h.Get("KV-Operation") != "" || h.Get("Nats-Marker-Reason") != "") {
			return nil, 0, false, nil
		}
	}
	return resp.Message.Data, resp.Message.Seq, true, nil
}

// User is the name hosts and clients log in to the control plane with,
// their token as the password.
const User = "apex"

// HashToken returns the bcrypt hash of a token, which `apex farm serve
// --token` accepts in its place.
func HashToken(token string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(token), 11)
	return string(h), err
}

// IsHash reports whether a --token is a bcrypt hash.
func IsHash(token string) bool {
	return strings.HasPrefix(token, "$2a$") || strings.HasPrefix(token, "$2b$")
}

// TokenMatches checks a token presented by a client against the farm's
// --token (the token itself, or its hash), in constant time.
func TokenMatches(presented, farmToken string) bool {
	if IsHash(farmToken) {
		return bcrypt.CompareHashAndPassword([]byte(farmToken), []byte(presented)) == nil
	}
	return subtle.ConstantTimeCompare([]byte(presented), []byte(farmToken)) == 1
}
