package device

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type listHost struct {
	name string
	ts   []Target
}

func (h listHost) Name() string                                 { return h.name }
func (h listHost) Targets(context.Context) ([]Target, error)    { return h.ts, nil }
func (h listHost) Open(context.Context, string) (Driver, error) { return nil, nil }

func target(host, serial, state string) Target {
	return Target{ID: QualifiedID(host, serial), Host: host, Serial: serial, State: state}
}

func TestRegistryResolve(t *testing.T) {
	r := NewRegistry(
		listHost{"adb", []Target{target("adb", "127.0.0.1:6520", "device"), target("adb", "127.0.0.1:6521", "device"), target("adb", "R58M123", "unauthorized")}},
		listHost{"wda", []Target{target("wda", "00008030-001A", "ready")}},
	)
	ctx := context.Background()
	tests := []struct {
		query, want string
		ambiguous   bool
		notFound    bool
	}{
		{query: "adb/127.0.0.1:6520", want: "adb/127.0.0.1:6520"},
		{query: "127.0.0.1:6521", want: "adb/127.0.0.1:6521"},
		{query: "R58", want: "adb/R58M123"},
		{query: "wda", want: "wda/00008030-001A"},
		{query: "6520", want: "adb/127.0.0.1:6520"},
		{query: "127.0.0.1", ambiguous: true},
		{query: "adb", ambiguous: true},
		{query: "", ambiguous: true},
		{query: "nope", notFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := r.Resolve(ctx, tt.query)
			var amb *AmbiguousError
			switch {
			case tt.ambiguous:
				if !errors.As(err, &amb) || len(amb.Candidates) < 2 {
					t.Fatalf("Resolve(%q) = %v, %v; want an ambiguity error listing candidates", tt.query, got.ID, err)
				}
			case tt.notFound:
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("Resolve(%q) err = %v; want ErrNotFound", tt.query, err)
				}
			default:
				if err != nil || got.ID != tt.want {
					t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.query, got.ID, err, tt.want)
				}
			}
		})
	}
}

func TestRegistryOpenRefusesUnauthorized(t *testing.T) {
	r := NewRegistry(listHost{"adb", []Target{{ID: "adb/X", Host: "adb", Serial: "X", State: "unauthorized", Hint: "accept the prompt on the phone"}}})
	_, _, err := r.Open(context.Background(), "X")
	if !errors.Is(err, ErrOffline) {
		t.Fatalf("Open unauthorized = %v; want ErrOffline with a hint", err)
	}
}

func TestParseKey(t *testing.T) {
	for in, want := range map[string]Key{"Enter": KeyEnter, "return": KeyEnter, "Backspace": KeyDelete, "volume-up": KeyVolumeUp, "HOME": KeyHome} {
		if got, err := ParseKey(in); err != nil || got != want {
			t.Errorf("ParseKey(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseKey("warp"); err == nil {
		t.Error("ParseKey(warp) succeeded; want an error listing the keys")
	}
}

// TestRegistryResolveNoChoice: with no device named, several ready devices
// ask for a choice, and attached devices that are not ready are named with
// what to do, instead of "no device attached".
func TestRegistryResolveNoChoice(t *testing.T) {
	ctx := context.Background()
	two := NewRegistry(listHost{"adb", []Target{target("adb", "A1", "device"), target("adb", "B2", "device")}})
	_, err := two.Resolve(ctx, "")
	if err == nil || !strings.Contains(err.Error(), "2 devices are attached: choose one with --device ID") ||
		!strings.Contains(err.Error(), "adb/A1, adb/B2") {
		t.Errorf("two ready devices: %v", err)
	}
	unauth := target("adb", "R58", "unauthorized")
	unauth.Hint = "accept the prompt on the phone"
	_, err = NewRegistry(listHost{"adb", []Target{unauth}}).Resolve(ctx, "")
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "no device is ready: adb/R58 is unauthorized: accept the prompt on the phone") {
		t.Errorf("only an unauthorized device: %v", err)
	}
	_, err = NewRegistry(listHost{"adb", nil}).Resolve(ctx, "")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no device attached") {
		t.Errorf("no device: %v", err)
	}
}
