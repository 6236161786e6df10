package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// step is one scripted HTTP answer.
type step struct {
	status int
	header map[string]string
	body   string
}

const okBody = `{"model":"m","choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`
const anOKBody = `{"model":"m","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3,"output_tokens":1}}`

// scripted serves steps in order (repeating the last) and counts calls.
func scripted(t *testing.T, steps ...step) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		s := steps[min(i, len(steps)-1)]
		for k, v := range s.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(s.status)
		fmt.Fprint(w, s.body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// waits records the delays a client waited between retries, without waiting.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) wait(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func ask() *Request { return &Request{Messages: []Message{User("hi")}} }

func TestRetries(t *testing.T) {
	oaErr := func(msg string) string { return `{"error":{"message":"` + msg + `","type":"x"}}` }
	tests := []struct {
		name      string
		anthropic bool
		steps     []step
		calls     int
		waits     []time.Duration // exact; nil with backoff means check ranges
		backoff   bool
		err       error
		errText   string
	}{
		{name: "429 honours Retry-After seconds", steps: []step{{429, map[string]string{"Retry-After": "2"}, oaErr("slow down")}, {200, nil, okBody}}, calls: 2, waits: []time.Duration{2 * time.Second}},
		{name: "429 honours retry-after-ms", steps: []step{{429, map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, oaErr("slow down")}, {200, nil, okBody}}, calls: 2, waits: []time.Duration{250 * time.Millisecond}},
		{name: "503 twice backs off", steps: []step{{503, nil, "upstream busy"}, {503, nil, "upstream busy"}, {200, nil, okBody}}, calls: 3, backoff: true},
		{name: "429 forever gives up", steps: []step{{429, nil, oaErr("Rate limit reached for gpt-4o")}}, calls: 4, backoff: true, err: ErrRateLimit, errText: "Rate limit reached for gpt-4o"},
		{name: "500 forever", steps: []step{{500, nil, oaErr("The server had an error")}}, calls: 4, backoff: true, err: ErrServer, errText: "The server had an error"},
		{name: "401 is not retried", steps: []step{{401, nil, oaErr("Incorrect API key provided: sk-bad")}}, calls: 1, err: ErrAuth, errText: "APEX_MODEL_API_KEY"},
		{name: "400 carries the server's message", steps: []step{{400, nil, oaErr("Invalid 'messages[0].content': string too long")}}, calls: 1, err: ErrBadRequest, errText: "string too long"},
		{name: "ollama error shape", steps: []step{{404, nil, `{"error":"model \"llama9\" not found, try pulling it first"}`}}, calls: 1, err: ErrBadRequest, errText: "try pulling it first"},
		{name: "anthropic 529 overloaded", anthropic: true, steps: []step{{529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, {200, nil, anOKBody}}, calls: 2, backoff: true},
		{name: "anthropic auth", anthropic: true, steps: []step{{401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}}, calls: 1, err: ErrAuth, errText: "invalid x-api-key"},
		{name: "bad JSON answer", steps: []step{{200, nil, `<html>proxy error</html>`}}, calls: 1, err: ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := scripted(t, tt.steps...)
			w := &waits{}
			o := Options{BaseURL: srv.URL, Model: "m", APIKey: "k", Backoff: 100 * time.Millisecond, Wait: w.wait}
			var c Client
			var err error
			if tt.anthropic {
				c, err = NewAnthropic(o)
			} else {
				c, err = NewOpenAI(o)
			}
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Complete(context.Background(), ask())
			if tt.err == nil && (err != nil || resp.Text != "ok") {
				t.Fatalf("Complete = %+v, %v; want ok", resp, err)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("err = %v; want %v", err, tt.err)
			}
			if tt.errText != "" && !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("err = %q; want it to say %q", err, tt.errText)
			}
			if got := int(n.Load()); got != tt.calls {
				t.Errorf("%d calls, want %d", got, tt.calls)
			}
			if tt.waits != nil && fmt.Sprint(w.d) != fmt.Sprint(tt.waits) {
				t.Errorf("waited %v, want %v", w.d, tt.waits)
			}
			if tt.backoff {
				if len(w.d) != tt.calls-1 {
					t.Fatalf("waited %v, want %d waits", w.d, tt.calls-1)
				}
				for i, d := range w.d {
					lo := (100 * time.Millisecond << i) / 2
					if d < lo || d > 2*lo {
						t.Errorf("wait %d = %v, want in [%v, %v] (exponential with jitter)", i, d, lo, 2*lo)
					}
				}
			}
			var ae *APIError
			if tt.err != nil && tt.err != ErrBadResponse && (!errors.As(err, &ae) || ae.Status != tt.steps[len(tt.steps)-1].status) {
				t.Errorf("err %v is not an *APIError with the status", err)
			}
		})
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}
	if got := retryAfter(h, now); got != 7*time.Second {
		t.Errorf("retryAfter(date) = %v, want 7s", got)
	}
	for _, v := range []string{"", "soon", "-3", "0"} {
		if got := retryAfter(http.Header{"Retry-After": {v}}, now); got != 0 {
			t.Errorf("retryAfter(%q) = %v, want 0", v, got)
		}
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 8)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	t.Run("timeout", func(t *testing.T) {
		calls.Store(0)
		c, _ := NewOpenAI(Options{BaseURL: srv.URL, Model: "m", Timeout: 50 * time.Millisecond})
		_, err := c.Complete(context.Background(), ask())
		if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v; want ErrTimeout and DeadlineExceeded", err)
		}
		if calls.Load() != 1 {
			t.Errorf("%d calls; a timeout is not retried", calls.Load())
		}
	})
	t.Run("cancel during call", func(t *testing.T) {
		c, _ := NewOpenAI(Options{BaseURL: srv.URL, Model: "m"})
		ctx, cancel := context.WithCancel(context.Background())
		for len(arrived) > 0 {
			<-arrived
		}
		go func() {
			<-arrived
			cancel()
		}()
		_, err := c.Complete(ctx, ask())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want context.Canceled", err)
		}
	})
	t.Run("cancel during backoff", func(t *testing.T) {
		busy, n := scripted(t, step{503, nil, "busy"})
		ctx, cancel := context.WithCancel(context.Background())
		c, _ := NewAnthropic(Options{BaseURL: busy.URL, Model: "m", Backoff: time.Hour, Wait: func(ctx context.Context, d time.Duration) error {
			cancel()
			return waitTimer(ctx, d)
		}})
		_, err := c.Complete(ctx, ask())
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "HTTP 503") {
			t.Fatalf("err = %v; want context.Canceled naming the last error", err)
		}
		if n.Load() != 1 {
			t.Errorf("%d calls after cancel, want 1", n.Load())
		}
	})
	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c, _ := NewOpenAI(Options{BaseURL: srv.URL, Model: "m"})
		calls.Store(0)
		if _, err := c.Complete(ctx, ask()); !errors.Is(err, context.Canceled) || calls.Load() != 0 {
			t.Fatalf("err = %v, calls %d; want context.Canceled and no call", err, calls.Load())
		}
	})
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	w := &waits{}
	c, _ := NewOpenAI(Options{BaseURL: "http://" + addr + "/v1", Model: "m", MaxRetries: 2, Wait: w.wait})
	_, err = c.Complete(context.Background(), ask())
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v; want one naming %s", err, addr)
	}
	if len(w.d) != 2 {
		t.Errorf("waited %v; want 2 retries", w.d)
	}
}
