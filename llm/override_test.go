package llm_test

import (
	"strings"
	"testing"

	"github.com/apexagent/apex/llm"
)

func TestOverride(t *testing.T) {
	env := map[string]string{"APEX_MODEL_NAME": "env-model", "APEX_MODEL_BASE_URL": "http://127.0.0.1:9/v1"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name    string
		e       llm.Endpoint
		want    llm.Endpoint // the planner's provider, base URL, model, key
		wantErr string
	}{
		{name: "model only keeps the environment's base URL", e: llm.Endpoint{Model: "qwen-vl"},
			want: llm.Endpoint{Provider: "openai", BaseURL: "http://127.0.0.1:9/v1", Model: "qwen-vl"}},
		{name: "all fields", e: llm.Endpoint{Provider: "Anthropic", BaseURL: " http://127.0.0.1:8/ ", Model: "claude", APIKey: "k"},
			want: llm.Endpoint{Provider: "anthropic", BaseURL: "http://127.0.0.1:8", Model: "claude", APIKey: "k"}},
		{name: "unknown provider", e: llm.Endpoint{Provider: "acme"}, wantErr: `provider "acme" is not one of`},
		{name: "base URL without scheme", e: llm.Endpoint{BaseURL: "localhost:11434"}, wantErr: "want http(s)://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := llm.LoadConfig("", getenv)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Override(tt.e, "playground")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Override error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ep, err := c.Endpoint("planner")
			if err != nil {
				t.Fatal(err)
			}
			got := llm.Endpoint{Provider: ep.Provider, BaseURL: ep.BaseURL, Model: ep.Model, APIKey: ep.APIKey}
			if got.Provider != tt.want.Provider || got.BaseURL != tt.want.BaseURL || got.Model != tt.want.Model || got.APIKey != tt.want.APIKey {
				t.Errorf("planner endpoint = %+v, want %+v", got, tt.want)
			}
			if c.Sources["model"] != "playground" {
				t.Errorf(`Sources["model"] = %q, want playground`, c.Sources["model"])
			}
		})
	}
}

func TestOverrideNeedsKeyForHostedService(t *testing.T) {
	c, err := llm.LoadConfig("", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	err = c.Override(llm.Endpoint{Provider: "openai", Model: "gpt-4o"}, "playground")
	if err == nil || !strings.Contains(err.Error(), "needs an API key") {
		t.Fatalf("Override without a key for a hosted service: error = %v, want it to ask for an API key", err)
	}
}
