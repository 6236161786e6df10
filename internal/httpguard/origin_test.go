package httpguard

import (
	"net/http/httptest"
	"testing"
)

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:5800": true, "127.9.9.9": true, "[::1]:5800": true, "::1": true,
		"localhost": true, "LocalHost:5800": true,
		"0.0.0.0": false, "[::]:5800": false, "192.168.1.20:5800": false, "localhost.example": false, "": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestCheckRequest(t *testing.T) {
	tests := []struct {
		method, host, origin string
		anyHost              bool
		ok                   bool
	}{
		{"GET", "127.0.0.1:5800", "", false, true},
		{"GET", "evil.example:5800", "", false, false},
		{"GET", "evil.example:5800", "", true, true},
		{"POST", "127.0.0.1:5800", "http://127.0.0.1:5800", false, true},
		{"POST", "127.0.0.1:5800", "http://evil.example", false, false},
		{"POST", "10.0.0.7:5800", "http://evil.example", true, false},
		{"GET", "127.0.0.1:5800", "http://evil.example", false, true},
		{"POST", "localhost:8100", "null", false, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "http://"+tt.host+"/", nil)
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if err := CheckRequest(r, tt.anyHost, "test", "serve it otherwise"); (err == nil) != tt.ok {
			t.Errorf("%s Host %s Origin %q (any host %v): %v, want ok %v", tt.method, tt.host, tt.origin, tt.anyHost, err, tt.ok)
		}
	}
}
