// Package registry is the farm's list of hosts and their devices: records
// in JetStream KV buckets that expire unless their host keeps beating.
package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm"
	"github.com/nats-io/nats.go/jetstream"
)

// Host is a machine next to phones, running `apex farm host`.
type Host struct {
	ID      string            `json:"id"`
	Labels  map[string]string `json:"labels,omitempty"`
	Devices int               `json:"devices"`
	Updated time.Time         `json:"updated"`
}

// Device is one phone a host serves. Labels hold what runs select on:
// platform, model, os, screen (WxH), host, and the host's custom labels.
type Device struct {
	ID       string            `json:"id"` // "<host>/<serial>", unique in the farm
	Host     string            `json:"host"`
	Serial   string            `json:"serial"`
	Platform string            `json:"platform"`
	Labels   map[string]string `json:"labels"`
	Health   Health            `json:"health"`
	Updated  time.Time         `json:"updated"`
}

// Health is how a device is doing, as its host last saw it.
type Health struct {
	// State is the adb or WebDriverAgent state: "device", "offline", …
	State     string `json:"state"`
	Battery   int    `json:"battery,omitempty"`    // percent; 0 when unknown
	StorageMB int    `json:"storage_mb,omitempty"` // free; 0 when unknown
	LastError string `json:"last_error,omitempty"`
}

// Matches reports whether every label in want has the device's value.
func (d Device) Matches(want map[string]string) bool {
	for k, v := range want {
		if d.Labels[k] != v {
			return false
		}
	}
	return true
}

// ParseLabels reads "k=v,k2=v2" (or repeated flags joined) into a map.
func ParseLabels(specs ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, spec := range specs {
		for _, kv := range strings.Split(spec, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("label %q: write key=value, e.g. platform=android", kv)
			}
			out[k] = v
		}
	}
	return out, nil
}

// Registry reads and writes the registry buckets. Safe for concurrent use.
type Registry struct {
	hosts, devices jetstream.KeyValue
	ttl            time.Duration
}

// Open opens the registry buckets.
func Open(ctx context.Context, js jetstream.JetStream) (*Registry, error) {
	h, err := js.KeyValue(ctx, farm.BucketHosts)
	if err != nil {
		return nil, fmt.Errorf("registry: open %s: %w (is the control plane provisioned?)", farm.BucketHosts, err)
	}
	d, err := js.KeyValue(ctx, farm.BucketDevices)
	if err != nil {
		return nil, fmt.Errorf("registry: open %s: %w", farm.BucketDevices, err)
	}
	st, err := d.Status(ctx)
	if err != nil {
		return nil, err
	}
	return &Registry{hosts: h, devices: d, ttl: st.TTL()}, nil
}

// Interval is how often a host should beat: a third of the TTL.
func (r *Registry) Interval() time.Duration { return r.ttl / 3 }

// PutHost registers or refreshes a host.
func (r *Registry) PutHost(ctx context.Context, h Host) error {
	h.Updated = time.Now()
	data, _ := json.Marshal(h)
	_, err := r.hosts.Put(ctx, farm.Key(h.ID), data)
	return err
}

// PutDevice registers or refreshes a device.
func (r *Registry) PutDevice(ctx context.Context, d Device) error {
	d.Updated = time.Now()
	data, _ := json.Marshal(d)
	_, err := r.devices.Put(ctx, farm.Key(d.ID), data)
	return err
}

// Devices lists the registered devices, by ID.
func (r *Registry) Devices(ctx context.Context) ([]Device, error) {
	return list[Device](ctx, r.devices)
}

// Device reads one registered device.
func (r *Registry) Device(ctx context.Context, id string) (Device, error) {
	e, err := r.devices.Get(ctx, farm.Key(id))
	if err != nil {
		return Device{}, fmt.Errorf("registry: no device %s (apex farm devices lists them): %w", id, err)
	}
	var d Device
	err = json.Unmarshal(e.Value(), &d)
	return d, err
}

// Hosts lists the registered hosts, by ID.
func (r *Registry) Hosts(ctx context.Context) ([]Host, error) { return list[Host](ctx, r.hosts) }

func list[T any](ctx context.Context, kv jetstream.KeyValue) ([]T, error) {
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	type item struct {
		key string
		v   T
	}
	var items []item
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue // expired between list and get
		}
		var v T
		if json.Unmarshal(e.Value(), &v) == nil {
			items = append(items, item{k, v})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	out := make([]T, len(items))
	for i, it := range items {
		out[i] = it.v
	}
	return out, nil
}

// Target is the device as a session target (its model and screen size
// from its labels).
func (d Device) Target() device.Target {
	t := device.Target{ID: d.ID, Host: d.Host, Serial: d.Serial, Platform: device.Platform(d.Platform), State: "device",
		Model: d.Labels["model"]}
	if w, h, ok := strings.Cut(d.Labels["screen"], "x"); ok {
		t.Width, _ = strconv.Atoi(w)
		t.Height, _ = strconv.Atoi(h)
	}
	return t
}
