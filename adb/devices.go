package adb

import (
	"fmt"
	"strings"

	"github.com/apexagent/apex/internal/lazy"
)

// DeviceInfo is one line of `adb devices -l`.
type DeviceInfo struct {
	Serial      string `json:"serial"`
	State       string `json:"state"` // device, offline, unauthorized, recovery, "no permissions (…)", …
	Product     string `json:"product,omitempty"`
	Model       string `json:"model,omitempty"`
	Device      string `json:"device,omitempty"`
	USB         string `json:"usb,omitempty"`
	TransportID string `json:"transport_id,omitempty"`
	// Extra keeps key:value fields this client does not know.
	Extra map[string]string `json:"extra,omitempty"`
}

// keyValue matches the key:value fields that follow the state.
var keyValue = lazy.Regexp(`^[a-z][a-z_]*:\S*$`)

// ParseDevices reads the reply of host:devices-l (or host:devices, or one
// message of host:track-devices): one device a line, the serial, the state
// (which may contain spaces, as "no permissions (…)" does), then key:value
// fields.
func ParseDevices(s string) ([]DeviceInfo, error) {
	var out []DeviceInfo
	for n, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return nil, fmt.Errorf("%w: device line %d %q has no state", ErrProtocol, n+1, line)
		}
		d := DeviceInfo{Serial: fields[0]}
		var state []string
		rest := fields[1:]
		for len(rest) > 0 && (len(state) == 0 || !keyValue().MatchString(rest[0])) {
			state = append(state, rest[0])
			rest = rest[1:]
		}
		d.State = strings.Join(state, " ")
		for _, f := range rest {
			k, v, _ := strings.Cut(f, ":")
			switch k {
			case "product":
				d.Product = v
			case "model":
				d.Model = v
			case "device":
				d.Device = v
			case "usb":
				d.USB = v
			case "transport_id":
				d.TransportID = v
			default:
				if d.Extra == nil {
					d.Extra = map[string]string{}
				}
				d.Extra[k] = v
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// Hint says what a person should do about a device in this state, or ""
// when the device is usable.
func (d DeviceInfo) Hint() string {
	switch {
	case d.State == "device":
		return ""
	case d.State == "unauthorized":
		return "unlock the phone and accept the \"Allow USB debugging?\" prompt, then retry"
	case d.State == "offline":
		return "the device does not answer: replug it, or for a network device run `adb disconnect " + d.Serial + "` then `adb connect " + d.Serial + "`"
	case d.State == "authorizing" || d.State == "connecting":
		return "the device is still connecting; retry in a few seconds"
	case strings.HasPrefix(d.State, "no permissions"):
		return "this user may not open the USB device: add a udev rule for it (see the android-sdk-platform-tools-common package) and replug"
	case d.State == "recovery" || d.State == "bootloader" || d.State == "sideload" || d.State == "rescue":
		return "the device is in " + d.State + " mode: reboot it into Android"
	}
	return "the device is " + d.State + ": it cannot be driven in that state"
}
