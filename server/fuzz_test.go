package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/server"
)

// FuzzRequestBodies sends any bytes as the JSON body of every POST: each
// answer is a JSON error a client can show, never a crash or a 500.
func FuzzRequestBodies(f *testing.F) {
	h := deviceless(f, func(_ server.ModelSettings, on func(event.Event)) (agent.AI, error) {
		return agent.New(agent.Config{OnEvent: on})
	})
	for _, seed := range []string{`{}`, `{"deviceId": "x"}`, `{"action": "Tap", "params": {"locate": "OK"}}`,
		`{"goal": "tap \"OK\""}`, `[]`, `null`, `{"goal": 1}`, `{"action": "Tap", "params": "x"}`, ``, `{`} {
		f.Add(seed)
	}
	paths := []string{"/session", "/interact", "/execute", "/cancel/x"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range paths {
			rec, m := post(t, h, path, body)
			if msg, _ := m["error"].(string); rec.Code == http.StatusInternalServerError || rec.Code < 400 || msg == "" {
				t.Errorf("POST %s %q: %d %v, want a 4xx or 502 error", path, body, rec.Code, m)
			}
		}
	})
}

// FuzzConfig: any body sent as model settings gets a JSON answer: 200 for
// settings, 400 for anything else, never a failure of the server.
func FuzzConfig(f *testing.F) {
	h := deviceless(f, func(m server.ModelSettings, on func(event.Event)) (agent.AI, error) {
		if m.Provider != "" && m.Provider != "openai" {
			return nil, errors.New("unknown provider")
		}
		return agent.New(agent.Config{OnEvent: on})
	})
	for _, seed := range []string{`{}`, `{"model": "m"}`, `{"provider": "acme"}`, `{"reset": true}`, `{"apiKey": 5}`, `[]`, `null`, ``, `{"model": "m", "x": 1}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/config", "/config/test"} {
			rec, m := post(t, h, path, body)
			switch {
			case rec.Code == http.StatusOK && path == "/config":
			case rec.Code == http.StatusBadRequest || rec.Code == http.StatusNotImplemented:
				if msg, _ := m["error"].(string); msg == "" {
					t.Errorf("POST %s %q: %d without an error message", path, body, rec.Code)
				}
			default:
				t.Errorf("POST %s %q: %d %v", path, body, rec.Code, m)
			}
		}
	})
}

// deviceless is a playground whose devices never open.
func deviceless(f *testing.F, newAgent func(server.ModelSettings, func(event.Event)) (agent.AI, error)) http.Handler {
	srv, err := server.New(server.Options{
		Open: func(context.Context, string) (device.Driver, device.Target, func(), error) {
			return nil, device.Target{}, nil, errors.New("no device here")
		},
		NewAgent: newAgent,
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	return srv.Handler()
}

// post sends body to path on a loopback host and decodes the JSON answer.
func post(t *testing.T, h http.Handler, path, body string) (*httptest.ResponseRecorder, map[string]any) {
	req := httptest.NewRequest("POST", path, bytes.NewReader([]byte(body)))
	req.Host = "127.0.0.1:5800"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("POST %s %q: answer is not JSON: %v", path, body, err)
	}
	return rec, m
}
