package server_test

import (
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/apexagent/apex/internal/proctest"
)

// BenchmarkScreenshot is one GET /screenshot of the simulated phone over
// HTTP (goal: a median ≤ 100 ms).
func BenchmarkScreenshot(b *testing.B) {
	p := startPhone(b, nil)
	if _, err := p.srv.Connect(context.Background(), ""); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.Get(p.http.URL + "/screenshot")
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n == 0 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
}

// BenchmarkMJPEG10Viewers has ten viewers each read b.N frames of GET
// /mjpeg while the screen keeps changing, with the playground's shipped
// options (goal: ≥ 30 frames/s per viewer).
func BenchmarkMJPEG10Viewers(b *testing.B) {
	tenViewers(b, nil, func(ctx context.Context, url string, n int, read *atomic.Int64) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"/mjpeg", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		mr := multipart.NewReader(resp.Body, params["boundary"])
		for range n {
			part, err := mr.NextPart()
			if err != nil {
				return err
			}
			m, _ := io.Copy(io.Discard, part)
			read.Add(m)
		}
		return nil
	})
}

// BenchmarkH264_10Viewers is BenchmarkMJPEG10Viewers for the H.264
// preview (GET /preview/h264, a WebSocket).
func BenchmarkH264_10Viewers(b *testing.B) {
	tenViewers(b, func(p *phone) {
		if _, err := p.dev.Server().Encoder(); err != nil {
			b.Skipf("%v", err)
		}
	}, func(ctx context.Context, url string, n int, read *atomic.Int64) error {
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/preview/h264", nil)
		if err != nil {
			return err
		}
		defer c.CloseNow()
		c.SetReadLimit(16 << 20)
		for got := 0; got < n; {
			_, msg, err := c.Read(ctx)
			if err != nil {
				return err
			}
			read.Add(int64(len(msg)))
			if msg[0] != 1 { // not the config
				got++
			}
		}
		return nil
	})
}

// tenViewers starts a phone whose screen keeps changing and ten viewers
// that each read b.N frames with view, and reports the frames per second
// each got, a viewer's bandwidth and the CPU a frame cost. check, when
// set, may skip the benchmark for the phone.
func tenViewers(b *testing.B, check func(*phone), view func(ctx context.Context, url string, n int, read *atomic.Int64) error) {
	p := startPhone(b, nil)
	if check != nil {
		check(p)
	}
	if _, err := p.srv.Connect(context.Background(), ""); err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	changeScreen(b, p)
	const viewers = 10
	n := b.N
	b.ResetTimer()
	start := time.Now()
	cpu0 := cpuTime()
	var wg sync.WaitGroup
	var read atomic.Int64
	for range viewers {
		wg.Go(func() {
			if err := view(ctx, p.http.URL, n, &read); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(n)/secs, "frames/s/viewer")
	b.ReportMetric(float64(read.Load())/viewers/secs/1000, "kB/s/viewer")
	// The CPU a frame cost (phone, preview, viewers and the phone's
	// ffmpeg) says what a busy machine hides: N idle cores give at most
	// N×1000/cpu-ms frames/s.
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(n), "cpu-ms/frame")
	// The cores the run got: on a machine shared with other work, frames/s
	// = cores × 1000 / cpu-ms/frame.
	b.ReportMetric(cpu.Seconds()/secs, "cores")
}

// BenchmarkExecuteAction is one POST /execute of an action, answered at
// the task's end: the runner's observe-act-settle step, its record in the
// store (screenshots, Scene) and its HTML report.
func BenchmarkExecuteAction(b *testing.B) {
	p := startPhone(b, nil)
	p.ready()
	body := map[string]any{"action": "Tap", "params": map[string]any{"locate": map[string]int{"x": 5, "y": 1000}}}
	b.ResetTimer()
	for b.Loop() {
		if m := p.mustDo(200, "POST", "/execute", body); m["status"] != "done" {
			b.Fatalf("execute: %v %v", m["status"], m["error"])
		}
	}
}

// cpuTime is the CPU time this process and its running children (the
// simulated phone's ffmpeg) have used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	d := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	for _, p := range proctest.Children() {
		d += p.CPU
	}
	return d
}
