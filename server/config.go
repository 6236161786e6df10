package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/internal/httpguard"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// ModelSettings are the model settings a client sends (POST /config).
// Empty fields keep what apex.yaml and the environment say, so an empty
// config never overwrites the environment.
type ModelSettings struct {
	// Provider is openai, anthropic or a preset name (qwen, ollama, …).
	Provider string `json:"provider,omitempty"`
	BaseURL  string `json:"baseUrl,omitempty"`
	Model    string `json:"model,omitempty"`
	APIKey   string `json:"apiKey,omitempty"`
}

func (m ModelSettings) trimmed() ModelSettings {
	return ModelSettings{strings.TrimSpace(m.Provider), strings.TrimSpace(m.BaseURL), strings.TrimSpace(m.Model), strings.TrimSpace(m.APIKey)}
}

// Empty reports whether m changes nothing.
func (m ModelSettings) Empty() bool { return m.trimmed() == ModelSettings{} }

// hash is stable across processes and field order: identical settings are
// a no-op however a client spells its JSON.
func (m ModelSettings) hash() string {
	t := m.trimmed()
	sum := sha256.Sum256([]byte(strings.Join([]string{t.Provider, t.BaseURL, t.Model, t.APIKey}, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// ModelView is the settings as GET /config shows them: never the key.
type ModelView struct {
	Provider  string `json:"provider,omitempty"`
	BaseURL   string `json:"baseUrl,omitempty"`
	Model     string `json:"model,omitempty"`
	APIKeySet bool   `json:"apiKeySet"`
	// Source is environment (apex.yaml and the environment alone) or
	// playground (a client's settings on top).
	Source string `json:"source"`
	Hash   string `json:"hash"`
	// Offline is set when no model is configured: goals run on the rule
	// planner, in its controlled language.
	Offline bool `json:"offline"`
	// Pending is set when new settings wait for the running task to end.
	Pending bool `json:"pending,omitempty"`
}

// ModelCheck is one model endpoint's answer to POST /config/test.
type ModelCheck struct {
	Roles     []string `json:"roles"`
	Provider  string   `json:"provider"`
	Model     string   `json:"model"`
	BaseURL   string   `json:"baseUrl"`
	OK        bool     `json:"ok"`
	LatencyMS int64    `json:"latencyMs"`
	Answer    string   `json:"answer,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// models holds the settings in force and the runtime built from them.
type models struct {
	mu       sync.Mutex
	settings ModelSettings
	rt       agent.AI
	// next is a runtime built while a task ran; the session adopts it
	// before its next task.
	next         agent.AI
	nextSettings ModelSettings
}

// current is the runtime a task starts with, adopting settings that
// arrived while the last task ran.
func (ms *models) current() agent.AI {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.next != nil {
		ms.rt, ms.settings, ms.next = ms.next, ms.nextSettings, nil
	}
	return ms.rt
}

func (ms *models) view() ModelView {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m, pending := ms.settings, ms.next != nil
	a := ms.rt
	if pending {
		m, a = ms.nextSettings, ms.next
	}
	v := ModelView{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Model, APIKeySet: m.APIKey != "",
		Source: "environment", Hash: m.hash(), Pending: pending}
	if !m.Empty() {
		v.Source = "playground"
	}
	if o, ok := a.(interface{ Offline() bool }); ok {
		v.Offline = o.Offline()
	}
	return v
}

func (s *Server) configAPI() []route {
	return []route{
		{"GET /config", s.getConfig},
		{"POST /config", s.postConfig},
		{"POST /config/test", s.testConfig},
	}
}

func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"model": s.models.view()})
}

// postConfig applies new model settings. Empty settings and settings
// identical to those in force change nothing ({"reset": true} returns to
// the environment's); new ones are validated by building the runtime at
// once, so a mistake is answered here and not at the next task.
func (s *Server) postConfig(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ModelSettings
		Reset bool `json:"reset"`
		// AIConfig is Midscene's body (midscene_config.go).
		AIConfig map[string]any `json:"aiConfig,omitempty"`
	}
	if err := readJSON(r, &body); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, 0, err)
		return
	}
	if body.AIConfig != nil {
		body.ModelSettings = body.ModelSettings.overlay(aiConfigSettings(body.AIConfig))
	}
	changed, err := s.Configure(body.ModelSettings, body.Reset)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	msg := "model settings unchanged"
	if changed {
		msg = "model settings updated: the next task uses them"
	}
	writeJSON(w, http.StatusOK, map[string]any{"changed": changed, "model": s.models.view(), "session": s.sess.view(),
		"status": "ok", "message": msg})
}

// Configure applies model settings as POST /config does and reports
// whether anything changed. The fields m gives replace those in force and
// the rest stay, so a client can change the model without sending the key
// again; with reset, m replaces them all (empty: the environment's alone).
func (s *Server) Configure(m ModelSettings, reset bool) (bool, error) {
	m = m.trimmed()
	if m.Empty() && !reset {
		return false, nil
	}
	if err := s.checkModelURL(m.BaseURL); err != nil {
		return false, err
	}
	in := s.models.inForce()
	next := m
	if !reset {
		next = in.overlay(m)
	}
	if next.hash() == in.hash() {
		return false, nil
	}
	rt, err := s.opts.NewAgent(next, s.onEvent)
	if err != nil {
		return false, errorf(http.StatusBadRequest, "model settings: %v", err)
	}
	// A running task keeps its runtime; the session adopts the new one
	// before its next task. An idle session passes through recreating so
	// clients see the change land.
	if s.sess.swapIdle(func() { s.adopt(next, rt) }, s.publishSession) {
		return true, nil
	}
	s.models.mu.Lock()
	s.models.next, s.models.nextSettings = rt, next
	s.models.mu.Unlock()
	return true, nil
}

// overlay is m with the fields o gives. A key is bound to where it was
// given for: when o changes the provider or the base URL, m's key stays
// behind and only o's own goes on (apex.yaml's and the environment's are
// bound the same way by llm.Config.Override).
func (m ModelSettings) overlay(o ModelSettings) ModelSettings {
	pick := func(a, b string) string {
		if b != "" {
			return b
		}
		return a
	}
	key := pick(m.APIKey, o.APIKey)
	if (o.Provider != "" && o.Provider != m.Provider) || (o.BaseURL != "" && o.BaseURL != m.BaseURL) {
		key = o.APIKey
	}
	return ModelSettings{pick(m.Provider, o.Provider), pick(m.BaseURL, o.BaseURL), pick(m.Model, o.Model), key}
}

// checkModelURL refuses a base URL a client sends that is neither https nor
// on loopback, unless the operator allows any (Options.AllowModelURL): the
// playground would otherwise fetch whatever host a client names.
func (s *Server) checkModelURL(raw string) error {
	if raw == "" || s.opts.AllowModelURL {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errorf(http.StatusBadRequest, "base URL %q: %v", raw, err)
	}
	if u.Scheme == "https" || (u.Scheme == "http" && httpguard.Loopback(u.Host)) {
		return nil
	}
	return errorf(http.StatusForbidden, "base URL %q refused: a model's base URL set over the API must be https:// or on loopback (start the playground with --allow-model-url to allow others)", raw)
}

// inForce is the settings the next task will use.
func (ms *models) inForce() ModelSettings {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.next != nil {
		return ms.nextSettings
	}
	return ms.settings
}

func (s *Server) adopt(m ModelSettings, rt agent.AI) {
	s.models.mu.Lock()
	defer s.models.mu.Unlock()
	s.models.settings, s.models.rt, s.models.next = m, rt, nil
}

// swapIdle runs swap unless a task runs (false). A ready session shows
// recreating while it swaps; publish tells clients of each state.
func (ss *session) swapIdle(swap func(), publish func()) bool {
	ss.mu.Lock()
	switch ss.state {
	case StateRunning, StateCreating, StateDestroying, StateRecreating:
		// Only a running task holds the runtime; the others are brief and
		// leave the session without a task, so the next task adopts it.
		ss.mu.Unlock()
		return false
	case StateReady:
		ss.state = StateRecreating
		ss.mu.Unlock()
		publish()
		swap()
		ss.mu.Lock()
		if ss.state == StateRecreating {
			ss.state = StateReady
		}
		ss.mu.Unlock()
		publish()
		return true
	}
	ss.mu.Unlock()
	swap()
	return true
}

// testConfig asks each model endpoint the settings configure for a short
// answer: the fields in the body over the settings in force (and those
// over the environment's).
func (s *Server) testConfig(w http.ResponseWriter, r *http.Request) {
	var m ModelSettings
	if err := readJSON(r, &m); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, 0, err)
		return
	}
	if s.opts.TestModel == nil {
		writeError(w, http.StatusNotImplemented, errors.New("this playground cannot test models"))
		return
	}
	m = m.trimmed()
	if err := s.checkModelURL(m.BaseURL); err != nil {
		writeError(w, 0, err)
		return
	}
	m = s.models.inForce().overlay(m)
	ctx, cancel := context.WithTimeout(r.Context(), modelTestTimeout)
	defer cancel()
	checks, err := s.opts.TestModel(ctx, m.trimmed())
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("model test: %w", err))
		return
	}
	ok := len(checks) > 0
	for _, c := range checks {
		ok = ok && c.OK
	}
	if checks == nil {
		checks = []ModelCheck{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": ok, "results": checks})
}

// modelTestTimeout bounds POST /config/test: a check is one short answer.
const modelTestTimeout = 60 * time.Second
