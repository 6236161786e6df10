package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestOverlayBindsTheKey(t *testing.T) {
	in := ModelSettings{Provider: "openai", BaseURL: "https://a.example/v1", Model: "m", APIKey: "k"}
	tests := []struct {
		name    string
		o       ModelSettings
		wantKey string
	}{
		{"model only", ModelSettings{Model: "n"}, "k"},
		{"same base URL", ModelSettings{BaseURL: "https://a.example/v1"}, "k"},
		{"another base URL", ModelSettings{BaseURL: "http://127.0.0.1:9/v1"}, ""},
		{"another provider", ModelSettings{Provider: "anthropic"}, ""},
		{"another base URL with its key", ModelSettings{BaseURL: "http://127.0.0.1:9/v1", APIKey: "mine"}, "mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := in.overlay(tt.o).APIKey; got != tt.wantKey {
				t.Errorf("key = %q, want %q", got, tt.wantKey)
			}
		})
	}
}

func TestCheckModelURL(t *testing.T) {
	tests := []struct {
		url      string
		allowAny bool
		wantCode int // 0: accepted
	}{
		{"https://api.example/v1", false, 0},
		{"http://127.0.0.1:11434/v1", false, 0},
		{"http://localhost:8000/v1", false, 0},
		{"http://[::1]:8000/v1", false, 0},
		{"http://169.254.169.254/latest", false, http.StatusForbidden},
		{"http://10.0.0.7:8000/v1", false, http.StatusForbidden},
		{"http://10.0.0.7:8000/v1", true, 0},
		{"ftp://127.0.0.1/", false, http.StatusForbidden},
	}
	for _, tt := range tests {
		s := &Server{opts: Options{AllowModelURL: tt.allowAny}}
		err := s.checkModelURL(tt.url)
		code := 0
		if err != nil {
			code = err.(*apiError).code
		}
		if code != tt.wantCode {
			t.Errorf("checkModelURL(%q, allow any %v) = %v, want code %d", tt.url, tt.allowAny, err, tt.wantCode)
		}
	}
}

func TestTextsBounded(t *testing.T) {
	s := &Server{}
	long := strings.Repeat("a", MaxText+1)
	_, err := s.parseJob(ExecuteRequest{Goal: long}, nil)
	if ae, ok := err.(*apiError); !ok || ae.code != http.StatusRequestEntityTooLarge {
		t.Errorf("a goal of %d bytes: %v, want 413", len(long), err)
	}
	cs := newContexts(time.Now)
	for _, body := range []string{`{"goal":"` + long + `"}`, `{"note":"` + long + `"}`} {
		w := httptest.NewRecorder()
		s.createContext(w, httptest.NewRequest("POST", "/playground-with-context", strings.NewReader(body)), cs)
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("context of %d bytes: %d %s, want 413", len(body), w.Code, w.Body)
		}
	}
}
