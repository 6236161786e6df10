package attack

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSlowloris: 500 connections that never finish a request (half their
// headers sent, or a body one byte at a time) do not keep an authorised
// client out: its request still answers within a second.
func TestSlowloris(t *testing.T) {
	const token = "attack-test-token-0123456789abcdef"
	url, _ := playground(t, "", []string{"APEX_PLAYGROUND_TOKEN=" + token}, "--sim")
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range 500 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			fmt.Fprintf(c, "GET /status HTTP/1.1\r\nHost: %s\r\nX-Slow: ", addr)
		} else {
			fmt.Fprintf(c, "POST /config HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{", addr)
		}
	}
	for _, c := range conns[:250] {
		c.Write([]byte("a")) // still trickling
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for i := range 3 {
		req, _ := http.NewRequest("GET", url+"status", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := client.Do(req)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("authorised request %d under 500 slow connections: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || took > time.Second {
			t.Errorf("authorised request %d: %d after %v, want 200 within 1s", i, resp.StatusCode, took)
		}
	}
	// Most slow connections were closed to make room.
	closed := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				closed++
			}
		}
	}
	if closed < 400 {
		t.Errorf("%d of 500 slow connections closed, want all but the per-address cap", closed)
	}
}
