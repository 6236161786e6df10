package ios_test

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/devicetest"
	"github.com/apexagent/apex/device/ios"
	simwda "github.com/apexagent/apex/sim/wda"
)

// TestSimRestart serves a simulated iPhone through a WebDriverAgent that
// is replaced mid-run (its sessions gone, as after a restart), then
// killed: the driver makes one new session, then reports ErrOffline.
func TestSimRestart(t *testing.T) {
	dev := startLab(t)
	var h atomic.Pointer[simwda.Server]
	h.Store(simwda.NewServer(dev.Phone, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().ServeHTTP(w, r) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	d, err := ios.Open(ctx(t), "http://"+ln.Addr().String(), &ios.Options{Timeout: 5 * time.Second, Backoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	must(t, d.LaunchApp(ctx(t), devicetest.App))
	before := d.Client().SessionsCreated()
	h.Store(simwda.NewServer(dev.Phone, nil)) // WebDriverAgent restarted
	if fg, err := d.ForegroundApp(ctx(t)); err != nil || fg != devicetest.App {
		t.Fatalf("ForegroundApp after the restart = %q, %v", fg, err)
	}
	must(t, d.Tap(ctx(t), device.Point{X: 600, Y: 1200}))
	if _, err := d.Source(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if n := d.Client().SessionsCreated() - before; n != 1 {
		t.Fatalf("%d sessions created after the restart; want exactly 1", n)
	}
	devicetest.Offline(t, d, func() { srv.Close() }, 6*time.Second)
}
