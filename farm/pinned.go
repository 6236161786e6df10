package farm

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DeviceSubject is where runs pinned to one device are queued.
func DeviceSubject(deviceID string) string { return "runs.device." + Key(deviceID) }

// DeviceConsumer is the durable pull consumer of one device's pinned runs;
// only the host serving the device fetches from it. A device gone for a
// day takes its consumer with it (its queued runs stay in the stream).
func DeviceConsumer(deviceID string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{Durable: "device-" + Key(deviceID), FilterSubject: DeviceSubject(deviceID),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second, MaxAckPending: 100, InactiveThreshold: 24 * time.Hour}
}
