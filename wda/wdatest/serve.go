package wdatest

import (
	"net"
	"net/http"
	"testing"
)

// Serve runs h on a loopback port until the test ends and returns its
// base URL: for WebDriverAgents that misbehave in ways Server does not
// stage (hanging, half-ready, forgetting every session).
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
