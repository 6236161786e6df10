package farm

import (
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DeviceSubject is where runs pinned to one device (its farm ID,
// HOST/SERIAL) are queued: under its host, whose one consumer takes them.
func DeviceSubject(deviceID string) string {
	host, _, _ := strings.Cut(deviceID, "/")
	return "runs.device." + Key(host) + "." + Key(deviceID)
}

// PinnedConsumer is the durable pull consumer of the runs pinned to the
// devices of one host; only that host fetches from it. One per host, not
// per device: each consumer is a replicated group a cluster keeps in
// step. A host gone for a day takes its consumer with it (its queued runs
// stay in the stream).
func PinnedConsumer(hostID string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{Durable: "host-" + Key(hostID), FilterSubject: "runs.device." + Key(hostID) + ".>",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second, MaxAckPending: 1000, InactiveThreshold: 24 * time.Hour}
}
