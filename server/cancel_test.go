package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/server"
)

// TestCancelReachesTheModelCall: a goal waiting on its model is cancelled
// for real: the model's HTTP request is dropped, the answer carries the
// partial record and its report, and the next task runs at once.
func TestCancelReachesTheModelCall(t *testing.T) {
	asked, dropped := make(chan struct{}, 4), make(chan struct{}, 4)
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client going away.
		_, _ = io.Copy(io.Discard, r.Body)
		asked <- struct{}{}
		select {
		case <-r.Context().Done():
			dropped <- struct{}{}
		case <-time.After(patience.Of(30 * time.Second)):
			http.Error(w, "the test forgot to cancel", http.StatusGatewayTimeout)
		}
	}))
	defer model.Close()
	env := map[string]string{"APEX_MODEL_BASE_URL": model.URL + "/v1", "APEX_MODEL_NAME": "slow", "APEX_MODEL_API_KEY": "k"}
	p := startPhone(t, &phoneOptions{opts: server.Options{
		NewAgent: func(_ server.ModelSettings, on func(event.Event)) (agent.AI, error) {
			cfg, err := llm.LoadConfig("", func(k string) string { return env[k] })
			if err != nil {
				return nil, err
			}
			return agent.New(agent.Config{LLM: cfg, OnEvent: on})
		},
	}})
	p.ready()
	id := p.mustDo(202, "POST", "/execute", map[string]any{"goal": "find the wifi settings and look around", "async": true})["requestId"].(string)
	select {
	case <-asked:
	case <-testCtx(t).Done():
		t.Fatal("the planner never asked the model")
	}
	start := time.Now()
	v := p.mustDo(200, "POST", "/cancel/"+id, nil)
	select {
	case <-dropped:
	case <-time.After(patience.Of(10 * time.Second)):
		t.Fatal("the model's request was not dropped by the cancel")
	}
	if ref, _ := v["report"].(map[string]any); v["status"] != "canceled" || ref == nil || !strings.HasPrefix(ref["url"].(string), "/runs/") {
		t.Errorf("cancel answered %v %v, want canceled with the report", v["status"], ref)
	}
	if events := v["dump"].(map[string]any)["events"].([]any); len(events) == 0 {
		t.Errorf("the cancelled task's record has no events")
	}
	if took := time.Since(start); took > patience.Of(10*time.Second) { // well before the model would answer
		t.Errorf("cancel took %v", took)
	}
	// The next task runs at once (an action: no model needed).
	if m := p.mustDo(200, "POST", "/execute", map[string]any{"action": "Home"}); m["status"] != "done" {
		t.Errorf("the task after the cancel: %v %v", m["status"], m["error"])
	}
}
