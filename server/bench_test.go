package server_test

import (
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/server"
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

// BenchmarkMJPEG10Viewers has ten viewers each read b.N frames while the
// screen keeps changing, and reports the frames per second each one got
// (goal: ≥ 15).
func BenchmarkMJPEG10Viewers(b *testing.B) {
	p := startPhone(b, &phoneOptions{opts: server.Options{FrameInterval: time.Millisecond, Resend: time.Second}})
	if _, err := p.srv.Connect(context.Background(), ""); err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		apps := []string{"com.android.settings", "com.apex.shop"}
		for i := 0; ctx.Err() == nil; i++ {
			_ = p.dev.Phone.Launch(apps[i%2])
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	const viewers = 10
	n := b.N
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range viewers {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", p.http.URL+"/mjpeg", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			defer resp.Body.Close()
			_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			mr := multipart.NewReader(resp.Body, params["boundary"])
			for range n {
				part, err := mr.NextPart()
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, part)
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "frames/s/viewer")
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
