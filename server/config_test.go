package server_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/server"
)

// models builds runtimes for the settings a playground receives and
// remembers which settings ran each goal.
type models struct {
	mu    sync.Mutex
	built []string // the Model of each runtime built
	ran   []string // the Model of the runtime of each goal
}

type taggedAgent struct {
	agent.AI
	tag string
	m   *models
}

func (a taggedAgent) Act(ctx context.Context, t agent.Task) (*agent.Result, error) {
	a.m.mu.Lock()
	a.m.ran = append(a.m.ran, a.tag)
	a.m.mu.Unlock()
	return a.AI.Act(ctx, t)
}

func (m *models) newAgent(s server.ModelSettings, on func(event.Event)) (agent.AI, error) {
	if s.Model == "broken" {
		return nil, errors.New(`model "broken" needs an API key: set one`)
	}
	rt, err := agent.New(agent.Config{OnEvent: on})
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.built = append(m.built, s.Model)
	return taggedAgent{rt, s.Model, m}, nil
}

func (m *models) counts() (built, ran []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.built...), append([]string(nil), m.ran...)
}

func TestConfigLifecycle(t *testing.T) {
	ms := &models{}
	p := startPhone(t, &phoneOptions{opts: server.Options{NewAgent: ms.newAgent}})
	p.ready()
	ev := p.events()
	if typ, _ := ev.next(t); typ != "session" {
		t.Fatalf("first event %s, want session", typ)
	}

	m := p.mustDo(200, "GET", "/config", nil)["model"].(map[string]any)
	if m["source"] != "environment" || m["offline"] != true || m["apiKeySet"] != false {
		t.Errorf("GET /config at start = %v, want the environment's, offline, no key", m)
	}

	// An empty config never overwrites the environment.
	for _, body := range []any{map[string]string{}, map[string]string{"model": "  ", "apiKey": ""}, nil} {
		if got := p.mustDo(200, "POST", "/config", body); got["changed"] != false {
			t.Errorf("POST /config %v = %v, want changed false", body, got)
		}
	}

	got := p.mustDo(200, "POST", "/config", map[string]string{"model": "m1", "apiKey": "secret"})
	if got["changed"] != true {
		t.Fatalf("new settings: %v, want changed", got)
	}
	view := got["model"].(map[string]any)
	if view["model"] != "m1" || view["apiKeySet"] != true || view["source"] != "playground" || strings.Contains(got["model"].(map[string]any)["hash"].(string), "secret") {
		t.Errorf("config view %v", view)
	}
	if _, hasKey := view["apiKey"]; hasKey {
		t.Errorf("the config view shows the API key: %v", view)
	}
	// The idle session passed through recreating.
	var states []string
	for len(states) < 2 {
		typ, m := ev.next(t)
		if typ == "session" {
			states = append(states, m["session"].(map[string]any)["state"].(string))
		}
	}
	if strings.Join(states, ",") != "recreating,ready" {
		t.Errorf("session states on a config change = %v, want recreating, ready", states)
	}

	// Identical settings, however spelt, are a no-op: no runtime is built.
	if got := p.mustDo(200, "POST", "/config", map[string]string{"apiKey": " secret ", "model": "m1"}); got["changed"] != false {
		t.Errorf("identical settings: %v, want changed false", got)
	}
	// Bad settings are refused at once and change nothing.
	code, bad := p.do("POST", "/config", map[string]string{"model": "broken"})
	if code != 400 || !strings.Contains(bad["error"].(string), "needs an API key") {
		t.Errorf("bad settings: %d %v, want 400 with the reason", code, bad)
	}
	if code, _ := p.do("POST", "/config", map[string]string{"modle": "x"}); code != 400 {
		t.Errorf("misspelt field: %d, want 400", code)
	}
	if built, _ := ms.counts(); strings.Join(built, ",") != ",m1" {
		t.Errorf("runtimes built: %q, want the environment's and m1's", built)
	}

	// A task keeps the runtime it started with; new settings wait for it.
	id := p.mustDo(202, "POST", "/execute", map[string]any{"goal": longGoal, "async": true})["requestId"].(string)
	got = p.mustDo(200, "POST", "/config", map[string]string{"model": "m2"})
	if view := got["model"].(map[string]any); got["changed"] != true || view["pending"] != true || view["apiKeySet"] != true {
		t.Errorf("settings during a task: %v, want changed and pending, the key kept", got)
	}
	p.mustDo(200, "POST", "/cancel/"+id, nil)
	v := p.wait(p.mustDo(202, "POST", "/execute", map[string]any{"goal": "back", "async": true})["requestId"].(string))
	if v["status"] != "done" {
		t.Fatalf("task after the change: %v", v)
	}
	if _, ran := ms.counts(); strings.Join(ran, ",") != "m1,m2" {
		t.Errorf("runtimes that ran the goals: %q, want m1 then m2", ran)
	}
	if m := p.mustDo(200, "GET", "/config", nil)["model"].(map[string]any); m["model"] != "m2" || m["pending"] == true {
		t.Errorf("config after the task: %v", m)
	}

	// reset returns to the environment's settings.
	got = p.mustDo(200, "POST", "/config", map[string]any{"reset": true})
	if got["changed"] != true || got["model"].(map[string]any)["source"] != "environment" {
		t.Errorf("reset: %v", got)
	}
}

func TestConfigTest(t *testing.T) {
	var asked []server.ModelSettings
	var mu sync.Mutex
	p := startPhone(t, &phoneOptions{opts: server.Options{
		TestModel: func(ctx context.Context, m server.ModelSettings) ([]server.ModelCheck, error) {
			mu.Lock()
			asked = append(asked, m)
			mu.Unlock()
			if m.Model == "" {
				return nil, errors.New("no model configured: give a model name")
			}
			return []server.ModelCheck{{Roles: []string{"planner"}, Model: m.Model, OK: m.Model != "down"},
				{Roles: []string{"executor"}, Model: m.Model, OK: true}}, nil
		},
	}})
	if got := p.mustDo(200, "POST", "/config/test", map[string]string{"model": "up"}); got["ok"] != true || len(got["results"].([]any)) != 2 {
		t.Errorf("test of a model that answers: %v", got)
	}
	if got := p.mustDo(200, "POST", "/config/test", map[string]string{"model": "down"}); got["ok"] != false {
		t.Errorf("test of a model that fails one role: %v, want ok false", got)
	}
	// An empty body tests the settings in force.
	p.mustDo(200, "POST", "/config", map[string]string{"model": "inforce"})
	p.mustDo(200, "POST", "/config/test", nil)
	if code, m := p.do("POST", "/config", map[string]any{"reset": true}); code != 200 || m["changed"] != true {
		t.Fatalf("reset: %d %v", code, m)
	}
	if code, m := p.do("POST", "/config/test", nil); code != 400 || !strings.Contains(m["error"].(string), "no model configured") {
		t.Errorf("test with no model: %d %v, want 400 saying what to set", code, m)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 4 || asked[2].Model != "inforce" || asked[3].Model != "" {
		t.Errorf("settings tested: %+v", asked)
	}

	p2 := startPhone(t, nil)
	if code, _ := p2.do("POST", "/config/test", nil); code != 501 {
		t.Errorf("config test without a tester: %d, want 501", code)
	}
}
