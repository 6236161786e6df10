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

// TestOverrideBindsKeysToTheirOrigin: a key from apex.yaml or the
// environment never follows the default endpoint to another origin; only
// the key given with the move goes there.
func TestOverrideBindsKeysToTheirOrigin(t *testing.T) {
	env := map[string]string{"APEX_MODEL_NAME": "m", "APEX_MODEL_BASE_URL": "https://models.example/v1", "APEX_MODEL_API_KEY": "operator-key"}
	tests := []struct {
		name    string
		e       llm.Endpoint
		wantKey string
	}{
		{"model only keeps the key", llm.Endpoint{Model: "other"}, "operator-key"},
		{"same origin, another path keeps the key", llm.Endpoint{BaseURL: "https://MODELS.example/v2"}, "operator-key"},
		{"another host drops it", llm.Endpoint{BaseURL: "http://127.0.0.1:9/v1"}, ""},
		{"another scheme drops it", llm.Endpoint{BaseURL: "http://models.example/v1"}, ""},
		{"another port drops it", llm.Endpoint{BaseURL: "https://models.example:8443/v1"}, ""},
		{"a provider alone keeps the base URL, so the key", llm.Endpoint{Provider: "ollama"}, "operator-key"},
		{"the client's own key goes with the move", llm.Endpoint{BaseURL: "http://127.0.0.1:9/v1", APIKey: "client-key"}, "client-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := llm.LoadConfig("", func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			c.Roles["validator"] = llm.Endpoint{APIKey: "validator-key"}
			if err := c.Override(tt.e, "playground"); err != nil {
				t.Fatal(err)
			}
			for _, role := range []string{"planner", "validator"} {
				ep, err := c.Endpoint(role)
				if err != nil {
					t.Fatal(err)
				}
				want := tt.wantKey
				if role == "validator" && want == "operator-key" {
					want = "validator-key"
				}
				if ep.APIKey != want {
					t.Errorf("%s's key at %s = %q, want %q", role, ep.BaseURL, ep.APIKey, want)
				}
			}
		})
	}
}

func TestRoleElsewhereGetsNoDefaultHeaders(t *testing.T) {
	c := &llm.Config{Model: llm.Endpoint{BaseURL: "https://a.example/v1", Model: "m", APIKey: "k", Headers: map[string]string{"X-Secret": "s"}},
		Roles: map[string]llm.Endpoint{"planner": {BaseURL: "http://127.0.0.1:9/v1"}}}
	ep, err := c.Endpoint("planner")
	if err != nil {
		t.Fatal(err)
	}
	if ep.APIKey != "" || len(ep.Headers) != 0 {
		t.Errorf("planner at another origin got key %q and headers %v, want neither", ep.APIKey, ep.Headers)
	}
}

func TestOverrideProviderMovesTheKeyNowhere(t *testing.T) {
	env := map[string]string{"APEX_MODEL_NAME": "m", "APEX_MODEL_PROVIDER": "deepseek", "APEX_MODEL_API_KEY": "operator-key"}
	c, err := llm.LoadConfig("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Override(llm.Endpoint{Provider: "ollama"}, "playground"); err != nil {
		t.Fatal(err)
	}
	if ep, _ := c.Endpoint("planner"); ep.APIKey != "" {
		t.Errorf("key at %s = %q: the preset's key followed the provider", ep.BaseURL, ep.APIKey)
	}
}
