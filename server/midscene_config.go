package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
)

// aiConfigSettings are the model settings of Midscene's aiConfig (the
// MIDSCENE_MODEL_* and OPENAI_* variables its client sends to POST /config
// and /connectivity-test). Midscene speaks only OpenAI-compatible
// endpoints, so any of them means provider openai.
func aiConfigSettings(c map[string]any) ModelSettings {
	get := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := c[k].(string); ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	m := ModelSettings{
		Model:   get("MIDSCENE_MODEL_NAME", "MIDSCENE_OPENAI_MODEL_NAME"),
		BaseURL: get("MIDSCENE_MODEL_BASE_URL", "OPENAI_BASE_URL"),
		APIKey:  get("MIDSCENE_MODEL_API_KEY", "OPENAI_API_KEY"),
	}
	if !m.Empty() {
		m.Provider = "openai"
	}
	return m
}

// connectivityTest serves POST /connectivity-test {config}: Midscene's
// model check, answered from POST /config/test's checks as
// {passed, message, checks}.
func (s *Server) connectivityTest(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Config map[string]any `json:"config"`
	}
	if err := readJSON(r, &body); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, 0, err)
		return
	}
	if body.Config == nil {
		writeError(w, http.StatusBadRequest, errors.New("give the model settings to test as config: {MIDSCENE_MODEL_NAME, MIDSCENE_MODEL_BASE_URL, MIDSCENE_MODEL_API_KEY}"))
		return
	}
	if s.opts.TestModel == nil {
		writeError(w, http.StatusNotImplemented, errors.New("this playground cannot test models"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), modelTestTimeout)
	defer cancel()
	checks, err := s.opts.TestModel(ctx, s.models.inForce().overlay(aiConfigSettings(body.Config)))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	passed := len(checks) > 0
	var failed []string
	for _, c := range checks {
		if !c.OK {
			passed = false
			failed = append(failed, strings.Join(c.Roles, ", ")+": "+c.Error)
		}
	}
	out := map[string]any{"passed": passed, "checks": checks}
	if !passed {
		out["message"] = strings.Join(failed, "; ")
		if len(checks) == 0 {
			out["message"] = "no model is configured: set MIDSCENE_MODEL_NAME and its base URL"
		}
	}
	writeJSON(w, http.StatusOK, out)
}
