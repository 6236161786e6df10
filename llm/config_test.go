package llm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func writeYAML(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "apex.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const apexYAML = `
name: shop suite          # other sections belong to other packages
model:
  provider: qwen
  name: qwen-vl-max
  api_key: ${DASHSCOPE_API_KEY}
  timeout: 45s
  max_retries: 5
  prices:
    qwen-vl-max: {input: 0.8, output: 3.2}
  roles:
    planner:
      model: qwen-max
      temperature: 0.3
    validator:
      max_tokens: 200
    executor:
      provider: ollama
      model: qwen2.5vl:7b
`

func TestLoadConfigPrecedence(t *testing.T) {
	file := writeYAML(t, apexYAML)
	type row struct {
		Provider, BaseURL, Model, APIKey string
		Temperature                      float64
		MaxTokens                        int
		Timeout                          time.Duration
	}
	resolve := func(t *testing.T, c *Config, role string) row {
		t.Helper()
		e, err := c.Endpoint(role)
		if err != nil {
			t.Fatal(err)
		}
		return row{e.Provider, e.BaseURL, e.Model, e.APIKey, *e.Temperature, e.MaxTokens, e.Timeout}
	}
	dash := Presets["qwen"].BaseURL

	t.Run("apex.yaml", func(t *testing.T) {
		c, err := LoadConfig(file, env("DASHSCOPE_API_KEY", "sk-dash"))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]row{
			"planner":   {"openai", dash, "qwen-max", "sk-dash", 0.3, 1500, 45 * time.Second},
			"validator": {"openai", dash, "qwen-vl-max", "sk-dash", 0.0, 200, 45 * time.Second},
			// Another service: the DashScope key is not sent to it.
			"executor": {"openai", Presets["ollama"].BaseURL, "qwen2.5vl:7b", "", 0.1, 300, 45 * time.Second},
			"recovery": {"openai", dash, "qwen-vl-max", "sk-dash", 0.2, 600, 45 * time.Second},
			"custom":   {"openai", dash, "qwen-vl-max", "sk-dash", 0.2, 1000, 45 * time.Second},
		}
		for role, w := range want {
			if d := cmp.Diff(w, resolve(t, c, role)); d != "" {
				t.Errorf("%s (-want +got):\n%s", role, d)
			}
		}
		if c.MaxRetries != 5 || c.Prices["qwen-vl-max"] != (Price{0.8, 3.2}) || !c.Configured() {
			t.Errorf("retries %d prices %v configured %v", c.MaxRetries, c.Prices, c.Configured())
		}
		if c.Sources["model"] != file {
			t.Errorf("Sources[model] = %q, want %q", c.Sources["model"], file)
		}
	})
	t.Run("env over apex.yaml, roles over env", func(t *testing.T) {
		c, err := LoadConfig(file, env(
			"DASHSCOPE_API_KEY", "sk-dash",
			"APEX_MODEL_BASE_URL", "http://gpu-box:8000/v1",
			"APEX_MODEL_NAME", "Qwen2.5-VL-72B",
			"APEX_MODEL_API_KEY", "sk-vllm",
			"APEX_MODEL_PROVIDER", "openai",
			"APEX_MODEL_TIMEOUT", "90s",
			"OPENAI_API_KEY", "sk-openai", // fill-only: apex.yaml has a key
		))
		if err != nil {
			t.Fatal(err)
		}
		vllm := "http://gpu-box:8000/v1"
		if d := cmp.Diff(row{"openai", vllm, "Qwen2.5-VL-72B", "sk-vllm", 0.0, 200, 90 * time.Second}, resolve(t, c, "validator")); d != "" {
			t.Errorf("validator (-want +got):\n%s", d)
		}
		got := resolve(t, c, "planner")
		if got.Model != "qwen-max" || got.BaseURL != vllm || got.APIKey != "sk-vllm" || got.Timeout != 90*time.Second {
			t.Errorf("planner = %+v; want the role's model on the env's endpoint", got)
		}
		if c.Sources["model"] != "APEX_MODEL_NAME" || c.Sources["api_key"] != "APEX_MODEL_API_KEY" {
			t.Errorf("sources = %v", c.Sources)
		}
	})
	t.Run("midscene names", func(t *testing.T) {
		c, err := LoadConfig("", env(
			"MIDSCENE_MODEL_NAME", "doubao-1.5-ui-tars",
			"MIDSCENE_MODEL_BASE_URL", "https://ark.cn-beijing.volces.com/api/v3",
			"MIDSCENE_MODEL_API_KEY", "ark-key",
			"OPENAI_API_KEY", "sk-other",
		))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(row{"openai", "https://ark.cn-beijing.volces.com/api/v3", "doubao-1.5-ui-tars", "ark-key", 0.2, 1500, 0}, resolve(t, c, "planner")); d != "" {
			t.Errorf("planner (-want +got):\n%s", d)
		}
	})
	t.Run("older OPENAI names", func(t *testing.T) {
		c, err := LoadConfig("", env("MIDSCENE_MODEL_NAME", "gpt-4o", "OPENAI_API_KEY", "sk-1", "OPENAI_BASE_URL", "https://openrouter.ai/api/v1"))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(row{"openai", "https://openrouter.ai/api/v1", "gpt-4o", "sk-1", 0.0, 300, 0}, resolve(t, c, "validator")); d != "" {
			t.Errorf("validator (-want +got):\n%s", d)
		}
	})
	t.Run("APEX beats MIDSCENE", func(t *testing.T) {
		c, _ := LoadConfig("", env("MIDSCENE_MODEL_NAME", "a", "APEX_MODEL_NAME", "b", "APEX_MODEL_BASE_URL", "http://127.0.0.1:1/v1"))
		if e, _ := c.Endpoint("planner"); e.Model != "b" {
			t.Errorf("model = %q, want APEX_MODEL_NAME's", e.Model)
		}
	})
}

func TestLoadConfigInference(t *testing.T) {
	tests := []struct {
		name, provider, baseURL string
		env                     []string
	}{
		{"claude name", ProviderAnthropic, AnthropicURL, []string{"APEX_MODEL_NAME", "claude-sonnet-4-5", "ANTHROPIC_API_KEY", "sk-ant"}},
		{"anthropic host", ProviderAnthropic, "https://api.anthropic.com", []string{"APEX_MODEL_NAME", "x", "APEX_MODEL_BASE_URL", "https://api.anthropic.com", "APEX_MODEL_API_KEY", "k"}},
		{"deepseek anthropic path", ProviderAnthropic, "https://api.deepseek.com/anthropic", []string{"APEX_MODEL_NAME", "deepseek-chat", "APEX_MODEL_BASE_URL", "https://api.deepseek.com/anthropic", "APEX_MODEL_API_KEY", "k"}},
		{"openrouter claude is openai", ProviderOpenAI, "https://openrouter.ai/api/v1", []string{"APEX_MODEL_NAME", "anthropic/claude-3.5-sonnet", "APEX_MODEL_PROVIDER", "openrouter", "APEX_MODEL_API_KEY", "k"}},
		{"gpt default url", ProviderOpenAI, OpenAIURL, []string{"APEX_MODEL_NAME", "gpt-4o", "OPENAI_API_KEY", "k"}},
		{"deepseek preset", ProviderOpenAI, "https://api.deepseek.com/v1", []string{"APEX_MODEL_NAME", "deepseek-chat", "APEX_MODEL_PROVIDER", "DeepSeek", "APEX_MODEL_API_KEY", "k"}},
		{"lmstudio needs no key", ProviderOpenAI, "http://127.0.0.1:1234/v1", []string{"APEX_MODEL_NAME", "qwen2.5-7b", "APEX_MODEL_PROVIDER", "lmstudio"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig("", env(tt.env...))
			if err != nil {
				t.Fatal(err)
			}
			e, err := c.Endpoint("planner")
			if err != nil {
				t.Fatal(err)
			}
			if e.Provider != tt.provider || e.BaseURL != tt.baseURL {
				t.Errorf("provider %s at %s; want %s at %s", e.Provider, e.BaseURL, tt.provider, tt.baseURL)
			}
			cl, err := c.Client("planner")
			if err != nil {
				t.Fatal(err)
			}
			inner := cl.(*roleClient).inner
			if _, isAnthropic := inner.(*Anthropic); isAnthropic != (tt.provider == ProviderAnthropic) {
				t.Errorf("client is %T for provider %s", inner, tt.provider)
			}
			if again, _ := c.Client("planner"); again != cl {
				t.Error("Client(planner) made a second client; want one per role")
			}
		})
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		env        []string
		role       string // when set, LoadConfig succeeds and Endpoint(role) fails
		want       string
		is         error
	}{
		{name: "nothing set", role: "planner", want: "set APEX_MODEL_NAME", is: ErrNotConfigured},
		{name: "hosted without key", env: []string{"APEX_MODEL_NAME", "gpt-4o"}, role: "executor", want: "needs an API key: set APEX_MODEL_API_KEY", is: ErrNotConfigured},
		{name: "role on another service without its key", yaml: "model:\n  roles:\n    planner: {provider: deepseek, model: deepseek-chat}\n", env: []string{"APEX_MODEL_NAME", "m", "APEX_MODEL_PROVIDER", "qwen", "APEX_MODEL_API_KEY", "sk-q"}, role: "planner", want: "set APEX_PLANNER_MODEL_API_KEY (or api_key under model.roles.planner", is: ErrNotConfigured},
		{name: "misspelt key", yaml: "model:\n  base_url: http://127.0.0.1:1/v1\n  nmae: gpt-4o\n", want: `apex.yaml:3: model: unknown setting "nmae" (did you mean name?)`},
		{name: "misspelt role key", yaml: "model:\n  roles:\n    planner:\n      temprature: 0.1\n", want: `apex.yaml:4: model.roles.planner: unknown setting "temprature" (did you mean temperature?)`},
		{name: "wrong type", yaml: "model:\n  name: m\n  max_tokens: lots\n", want: `apex.yaml:3: model.max_tokens: "lots" is not a whole number`},
		{name: "wrong type in a role", yaml: "model:\n  roles:\n    planner: {no_tools: maybe}\n", want: `apex.yaml:3: model.roles.planner.no_tools: "maybe" is not true or false`},
		{name: "indentation", yaml: "model:\n  name: m\n  base_url: http://127.0.0.1:1/v1\n  roles:\n    planner:\n      temperature: 0.1\n     max_tokens: 10\n", want: "apex.yaml:7: invalid YAML"},
		{name: "not sections", yaml: "- model\n", want: "apex.yaml:1: expected sections"},
		{name: "bad provider", yaml: "model:\n  provider: foo\n", want: `provider: "foo" is not one of`},
		{name: "bad env provider", env: []string{"APEX_MODEL_PROVIDER", "bar"}, want: `APEX_MODEL_PROVIDER="bar" is not one of`},
		{name: "bad timeout", yaml: "model:\n  name: m\n  timeout: soon\n", want: `apex.yaml:3: model.timeout: "soon" is not a duration`},
		{name: "bad env timeout", env: []string{"APEX_MODEL_TIMEOUT", "x"}, want: "APEX_MODEL_TIMEOUT"},
		{name: "temperature", yaml: "model:\n  roles:\n    planner: {temperature: 3}\n", want: "apex.yaml:3: model.roles.planner.temperature: 3 is outside"},
		{name: "api_key_env unset", yaml: "model:\n  api_key_env: MY_KEY\n", want: "api_key_env: MY_KEY is not set"},
		{name: "name and model", yaml: "model:\n  name: a\n  model: b\n", want: "keep one"},
		{name: "yaml syntax", yaml: "model: [\n", want: "apex.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := ""
			if tt.yaml != "" {
				file = writeYAML(t, tt.yaml)
			}
			c, err := LoadConfig(file, env(tt.env...))
			if tt.role != "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Configured() && tt.is == ErrNotConfigured && tt.name == "nothing set" {
					t.Error("Configured() with nothing set")
				}
				_, err = c.Client(tt.role)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v; want it to say %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v; want errors.Is %v", err, tt.is)
			}
			// A person reads these: no Go type names.
			if strings.Contains(err.Error(), "llm.") || strings.Contains(err.Error(), "fileModel") || strings.Contains(err.Error(), "unmarshal") {
				t.Errorf("err = %v names Go's types", err)
			}
			var ce *ConfigError
			if tt.yaml != "" && tt.env == nil && !errors.As(err, &ce) {
				t.Errorf("err = %v (%T); want a *ConfigError", err, err)
			}
		})
	}
	if c, err := LoadConfig(filepath.Join(t.TempDir(), "absent.yaml"), nil); err != nil || c.Configured() {
		t.Errorf("absent apex.yaml: %v, configured %v; want env only", err, c.Configured())
	}
}

func TestRoleEnv(t *testing.T) {
	file := writeYAML(t, "model:\n  roles:\n    planner: {model: from-yaml, temperature: 0.5}\n")
	c, err := LoadConfig(file, env(
		"MIDSCENE_MODEL_NAME", "qwen3-vl-plus", "MIDSCENE_MODEL_BASE_URL", "https://dashscope.aliyuncs.com/compatible-mode/v1", "MIDSCENE_MODEL_API_KEY", "sk-d",
		"MIDSCENE_MODEL_TIMEOUT", "30000", "MIDSCENE_MODEL_MAX_TOKENS", "2048",
		"APEX_PLANNER_MODEL_NAME", "qwen3-max", "MIDSCENE_PLANNING_MODEL_NAME", "loses-to-apex",
		"MIDSCENE_LOCATE_MODEL_NAME", "ui-tars", "MIDSCENE_LOCATE_MODEL_BASE_URL", "http://127.0.0.1:8000/v1",
		"MIDSCENE_INSIGHT_MODEL_NAME", "glm-4.6v", "MIDSCENE_INSIGHT_MODEL_BASE_URL", "https://open.bigmodel.cn/api/paas/v4", "MIDSCENE_INSIGHT_MODEL_API_KEY", "zk",
		"APEX_MODEL_TEMPERATURE", "0.3",
	))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Model, BaseURL, APIKey string
		Temperature            float64
		MaxTokens              int
		Timeout                time.Duration
	}
	want := map[string]row{
		"planner":  {"qwen3-max", Presets["qwen"].BaseURL, "sk-d", 0.5, 2048, 30 * time.Second},
		"executor": {"ui-tars", "http://127.0.0.1:8000/v1", "", 0.3, 2048, 30 * time.Second},
		"observer": {"glm-4.6v", "https://open.bigmodel.cn/api/paas/v4", "zk", 0.3, 2048, 30 * time.Second},
		"recovery": {"qwen3-vl-plus", Presets["qwen"].BaseURL, "sk-d", 0.3, 2048, 30 * time.Second},
	}
	for role, w := range want {
		e, err := c.Endpoint(role)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(w, row{e.Model, e.BaseURL, e.APIKey, *e.Temperature, e.MaxTokens, e.Timeout}); d != "" {
			t.Errorf("%s (-want +got):\n%s", role, d)
		}
	}
	if c.Sources["planner.model"] != "APEX_PLANNER_MODEL_NAME" {
		t.Errorf("sources = %v", c.Sources)
	}
	for _, bad := range [][]string{{"MIDSCENE_MODEL_TIMEOUT", "soon"}, {"APEX_MODEL_TEMPERATURE", "hot"}, {"MIDSCENE_MODEL_MAX_TOKENS", "-1"}} {
		if _, err := LoadConfig("", env(bad...)); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s=%s: err = %v, want one naming the variable", bad[0], bad[1], err)
		}
	}
}

func TestModelShorthand(t *testing.T) {
	c, err := LoadConfig(writeYAML(t, "model: llama3.2-vision\n"), env("APEX_MODEL_PROVIDER", "ollama"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Endpoint("planner")
	if err != nil || e.Model != "llama3.2-vision" || e.BaseURL != Presets["ollama"].BaseURL {
		t.Errorf("endpoint %+v, %v", e, err)
	}
}

func TestRoleNames(t *testing.T) {
	c := &Config{Roles: map[string]Endpoint{"summariser": {}}}
	got := strings.Join(c.RoleNames(), ",")
	if !strings.Contains(got, "executor,observer") || !strings.Contains(got, "summariser") {
		t.Errorf("RoleNames = %s", got)
	}
}
