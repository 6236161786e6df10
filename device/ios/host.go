package ios

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/wda"
)

// EnvURLs is the environment variable listing WebDriverAgent URLs,
// comma-separated.
const EnvURLs = "APEX_WDA_URLS"

// URLsFromEnv reads EnvURLs with getenv (os.Getenv in production).
func URLsFromEnv(getenv func(string) string) []string {
	var urls []string
	for _, u := range strings.Split(getenv(EnvURLs), ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// HostOptions configure a Host; nil means defaults.
type HostOptions struct {
	// Name is the host's prefix in device IDs (default "wda").
	Name string
	// Driver options for the devices this host opens.
	Driver *Options
	Log    *slog.Logger
}

// Host is a set of WebDriverAgent endpoints, one iPhone each. A device's
// serial is its endpoint (host:port, or the full URL when not plain http).
type Host struct {
	opts HostOptions

	mu   sync.Mutex
	urls []string
}

var _ device.Host = (*Host)(nil)

// NewHost returns a host over the WebDriverAgents at urls.
func NewHost(urls []string, opts *HostOptions) (*Host, error) {
	h := &Host{}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.Name == "" {
		h.opts.Name = "wda"
	}
	for _, u := range urls {
		if err := h.Add(u); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Name is the prefix of this host's device IDs.
func (h *Host) Name() string { return h.opts.Name }

// Add registers another endpoint; one already known is ignored.
func (h *Host) Add(rawURL string) error {
	u, err := wda.ParseURL(rawURL)
	if err != nil {
		return fmt.Errorf("%s: %w", EnvURLs, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, known := range h.urls {
		if known == u.String() {
			return nil
		}
	}
	h.urls = append(h.urls, u.String())
	return nil
}

// Serial is the device serial of the WebDriverAgent at rawURL.
func Serial(rawURL string) string {
	u, err := wda.ParseURL(rawURL)
	if err != nil {
		return rawURL
	}
	if u.Scheme == "http" && u.Path == "" {
		return u.Host
	}
	return u.String()
}

// statusTimeout bounds the /status asked of each endpoint when listing.
const statusTimeout = 2 * time.Second

// Hint is what to do when nothing answers at a WebDriverAgent URL.
func Hint(url string) string {
	return "WDA not reachable at " + url + ": start WebDriverAgent with `xcodebuild -project WebDriverAgent.xcodeproj " +
		"-scheme WebDriverAgentRunner -destination 'id=<UDID>' test` (a real iPhone also needs `iproxy 8100 8100`), " +
		"or run a simulated iPhone with `apex sim --ios 1`"
}

// Targets asks every endpoint for its /status. It creates no session:
// WebDriverAgent keeps one at a time, and listing must not end a run's.
func (h *Host) Targets(ctx context.Context) ([]device.Target, error) {
	h.mu.Lock()
	urls := append([]string{}, h.urls...)
	h.mu.Unlock()
	ts := make([]device.Target, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		serial := Serial(u)
		ts[i] = device.Target{ID: device.QualifiedID(h.Name(), serial), Host: h.Name(), Serial: serial,
			Platform: device.IOS, State: "offline", Hint: Hint(u)}
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, statusTimeout)
			defer cancel()
			c, err := wda.New(u, &wda.Options{Timeout: statusTimeout, Log: h.opts.Log})
			if err != nil {
				return
			}
			st, err := c.Status(sctx)
			switch {
			case err != nil:
				if ctx.Err() == nil {
					ts[i].Hint = fmt.Sprintf("%s (%v)", Hint(u), err)
				}
			case !st.Ready:
				ts[i].State = "starting"
				ts[i].Hint = "WebDriverAgent at " + u + " answers but is not ready: " + st.Message + "; wait and retry"
			default:
				ts[i].State, ts[i].Hint = "ready", ""
				ts[i].Model = strings.TrimSpace(st.Device + " iOS " + st.OS.Version)
				ts[i].Width, ts[i].Height = screenPixels(sctx, c)
			}
		})
	}
	wg.Wait()
	return ts, nil
}

// screenPixels is the screen's size in pixels, read without a session
// (listing must not start one): /window/size in points times /wda/screen's
// scale. 0×0 when the WebDriverAgent does not answer them.
func screenPixels(ctx context.Context, c *wda.Client) (int, int) {
	var size wda.Size
	var screen wda.Screen
	for path, out := range map[string]any{"/window/size": &size, "/wda/screen": &screen} {
		r, err := c.Do(ctx, http.MethodGet, path, nil)
		if err != nil || json.Unmarshal(r.Value, out) != nil {
			return 0, 0
		}
	}
	if screen.Scale <= 0 {
		return 0, 0
	}
	return int(math.Round(size.Width * screen.Scale)), int(math.Round(size.Height * screen.Scale))
}

// Open returns a driver for the endpoint serial names.
func (h *Host) Open(ctx context.Context, serial string) (device.Driver, error) {
	return Open(ctx, serial, h.opts.Driver)
}
