package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/adbd"
)

// DeviceInfo is one entry of GET /devices (and of `apex sim --json`).
type DeviceInfo struct {
	Serial     string `json:"serial"`
	Protocol   string `json:"protocol"`      // "adb" or "wda"
	Platform   string `json:"platform"`      // "android" or "ios"
	URL        string `json:"url,omitempty"` // iOS: the WebDriverAgent base URL
	Addr       string `json:"addr"`
	Model      string `json:"model"`
	Connect    string `json:"connect"` // how to attach it: the adb command, or Apex's --device flag
	Foreground string `json:"foreground,omitempty"`
	Online     bool   `json:"online"`
}

// Info describes the device.
func (d *Device) Info() DeviceInfo {
	pkg, _ := d.Phone.Foreground()
	if d.Platform == sim.PlatformIOS {
		if pkg == sim.Launcher {
			pkg = sim.SpringBoard
		}
		return DeviceInfo{Serial: d.Serial, Protocol: "wda", Platform: d.Platform, URL: d.URL, Addr: d.Addr, Model: d.Phone.Model(),
			Connect: "--device wda:" + d.URL, Foreground: pkg, Online: !d.stopped()}
	}
	return DeviceInfo{Serial: d.Serial, Protocol: "adb", Platform: sim.PlatformAndroid, Addr: d.Addr, Model: d.Phone.Props()["ro.product.model"],
		Connect: "adb connect " + d.Addr, Foreground: pkg, Online: !d.stopped()}
}

func (d *Device) stopped() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// serveState starts the loopback-only HTTP state endpoint.
func (l *Lab) serveState(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("lab: state address %q: %w (use 127.0.0.1:PORT)", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("lab: state address %q is not loopback; the state endpoint is for local tests only (use 127.0.0.1:PORT)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("lab: state endpoint: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /devices", func(w http.ResponseWriter, r *http.Request) {
		out := make([]DeviceInfo, 0, len(l.devices))
		for _, d := range l.devices {
			out = append(out, d.Info())
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET /devices/{serial}/state/{pkg}", func(w http.ResponseWriter, r *http.Request) {
		d, ok := l.Device(r.PathValue("serial"))
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no device " + r.PathValue("serial") + "; GET /devices lists them"})
			return
		}
		st, err := d.Phone.State(r.PathValue("pkg"))
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, adbd.ErrUnknownPackage) {
				code = http.StatusNotFound
			}
			writeJSON(w, code, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, st)
	})
	l.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	l.httpURL = "http://" + ln.Addr().String()
	go func() {
		if err := l.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			l.log.Error("lab: state endpoint stopped", "err", err)
		}
	}()
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
