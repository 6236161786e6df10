package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/internal/supervise"
	"github.com/apexagent/apex/server"
	"github.com/apexagent/apex/sim/lab"
)

// phone is a playground server driving one simulated phone.
type phone struct {
	t    testing.TB
	dev  *lab.Device
	srv  *server.Server
	http *httptest.Server
	// opened counts the device links open now.
	opened chan struct{}
}

type phoneOptions struct {
	// open wraps the real open (to block or fail it).
	open func(ctx context.Context, id string, real func() (device.Driver, device.Target, func(), error)) (device.Driver, device.Target, func(), error)
	opts server.Options
	// apps are app specs (YAML) installed on the phone.
	apps []string
	// encoder is the phone's H.264 encoder (lab.Options.Encoder).
	encoder string
	// onSupervise is told of the phone's supervised processes.
	onSupervise func(supervise.Event)
}

// startPhone starts a simulated phone and a playground server for it.
func startPhone(t testing.TB, po *phoneOptions) *phone {
	t.Helper()
	if po == nil {
		po = &phoneOptions{}
	}
	l, err := lab.Start(context.Background(), lab.Options{Android: 1, Seed: 1, AppFiles: po.apps, Encoder: po.encoder, OnSupervise: po.onSupervise})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p := &phone{t: t, dev: l.Devices()[0], opened: make(chan struct{}, 16)}
	target := device.Target{ID: device.QualifiedID("sim", p.dev.Serial), Host: "sim", Serial: p.dev.Serial,
		Platform: device.Android, State: "device"}
	realOpen := func(ctx context.Context) func() (device.Driver, device.Target, func(), error) {
		return func() (device.Driver, device.Target, func(), error) {
			d, err := android.OpenDirect(ctx, p.dev.Addr, labtest.Driver())
			if err != nil {
				return nil, device.Target{}, nil, err
			}
			p.opened <- struct{}{}
			return d, target, func() { d.Close(); <-p.opened }, nil
		}
	}
	opts := po.opts
	opts.Open = func(ctx context.Context, id string) (device.Driver, device.Target, func(), error) {
		if id != "" && id != target.ID {
			return nil, device.Target{}, nil, errors.New("no device " + id)
		}
		if po.open != nil {
			return po.open(ctx, id, realOpen(ctx))
		}
		return realOpen(ctx)()
	}
	opts.Targets = func(context.Context) ([]device.Target, error) { return []device.Target{target}, nil }
	if opts.NewAgent == nil {
		opts.NewAgent = func(_ server.ModelSettings, onEvent func(event.Event)) (agent.AI, error) {
			return agent.New(agent.Config{OnEvent: onEvent})
		}
	}
	p.srv, err = server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	p.http = httptest.NewServer(p.srv.Handler())
	t.Cleanup(func() {
		p.srv.Close()
		p.http.Close()
		if n := len(p.opened); n != 0 {
			t.Errorf("%d device links left open after Close", n)
		}
	})
	return p
}

// testCtx bounds one request or open: 40 s on an idle machine, stretched
// by patience (a tap that reads the screen with OCR takes 30 s beside
// make stress's CPU hog).
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(40*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// do sends a request with a JSON body (nil for none) and decodes the JSON
// answer into a map.
func (p *phone) do(method, path string, body any) (int, map[string]any) {
	p.t.Helper()
	code, data := p.raw(method, path, body, nil)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		p.t.Fatalf("%s %s: answer is not JSON: %v\n%s", method, path, err, data)
	}
	return code, m
}

func (p *phone) raw(method, path string, body any, hdr http.Header) (int, []byte) {
	p.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			p.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(testCtx(p.t), method, p.http.URL+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// mustDo is do that wants the status code want.
func (p *phone) mustDo(want int, method, path string, body any) map[string]any {
	p.t.Helper()
	code, m := p.do(method, path, body)
	if code != want {
		p.t.Fatalf("%s %s: status %d, want %d: %v", method, path, code, want, m)
	}
	return m
}

// on is the phone for a subtest t, so that its failures end t, not the
// parent test (FailNow from a subtest on its parent's t panics).
func (p *phone) on(t testing.TB) *phone {
	c := *p
	c.t = t
	return &c
}

func (p *phone) state() string {
	p.t.Helper()
	m := p.mustDo(200, "GET", "/runtime-info", nil)
	return m["session"].(map[string]any)["state"].(string)
}

// stream opens a GET whose answer goes on (events, MJPEG), closed when
// the test ends.
func (p *phone) stream(path string) *http.Response {
	p.t.Helper()
	req, err := http.NewRequestWithContext(testCtx(p.t), "GET", p.http.URL+path, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events follows GET /events.
func (p *phone) events() *sse {
	p.t.Helper()
	resp := p.stream("/events")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		p.t.Fatalf("GET /events: Content-Type %q", ct)
	}
	return &sse{sc: bufio.NewScanner(resp.Body)}
}

// mjpeg follows GET /mjpeg, checking the headers a browser needs.
func (p *phone) mjpeg() *multipart.Reader {
	p.t.Helper()
	resp := p.stream("/mjpeg")
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "no-transform") {
		p.t.Errorf("Cache-Control = %q, want no-transform", cc)
	}
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/x-mixed-replace" {
		p.t.Fatalf("Content-Type %q: %v", resp.Header.Get("Content-Type"), err)
	}
	return multipart.NewReader(resp.Body, params["boundary"])
}

// ready opens a session on the phone.
func (p *phone) ready() {
	p.t.Helper()
	p.mustDo(200, "POST", "/session", map[string]string{"deviceId": ""})
}

// wait polls /task-progress until the task ends and returns its view.
func (p *phone) wait(id string) map[string]any {
	p.t.Helper()
	ctx := testCtx(p.t)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		m := p.mustDo(200, "GET", "/task-progress/"+id, nil)
		if m["status"] != "running" {
			return m
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			p.t.Fatalf("task %s still running: %v", id, m)
		}
	}
}
