package llm

import (
	"net/url"
	"sort"
	"strings"
)

// The two wire protocols a client speaks.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// AnthropicURL is Anthropic's API root.
const AnthropicURL = "https://api.anthropic.com"

// Preset is a known model service: the protocol it speaks and its API root.
type Preset struct {
	Protocol string // ProviderOpenAI or ProviderAnthropic
	BaseURL  string
}

// Presets names the services apex.yaml's provider: (or
// APEX_MODEL_PROVIDER) may give instead of a base URL.
var Presets = map[string]Preset{
	"openai":     {ProviderOpenAI, OpenAIURL},
	"anthropic":  {ProviderAnthropic, AnthropicURL},
	"qwen":       {ProviderOpenAI, "https://dashscope.aliyuncs.com/compatible-mode/v1"},
	"dashscope":  {ProviderOpenAI, "https://dashscope.aliyuncs.com/compatible-mode/v1"},
	"deepseek":   {ProviderOpenAI, "https://api.deepseek.com/v1"},
	"doubao":     {ProviderOpenAI, "https://ark.cn-beijing.volces.com/api/v3"},
	"ark":        {ProviderOpenAI, "https://ark.cn-beijing.volces.com/api/v3"},
	"openrouter": {ProviderOpenAI, "https://openrouter.ai/api/v1"},
	"ollama":     {ProviderOpenAI, "http://127.0.0.1:11434/v1"},
	"vllm":       {ProviderOpenAI, "http://127.0.0.1:8000/v1"},
	"lmstudio":   {ProviderOpenAI, "http://127.0.0.1:1234/v1"},
}

func presetNames() string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// inferProtocol picks the wire protocol from a base URL and model name when
// no provider is given: Anthropic's host or an /anthropic path (DeepSeek's
// and others' Anthropic-compatible roots) speak Anthropic, as does a
// claude model with no base URL; the rest speak OpenAI.
func inferProtocol(baseURL, model string) string {
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err == nil && (strings.HasSuffix(u.Hostname(), "anthropic.com") || strings.Contains(strings.TrimRight(u.Path, "/")+"/", "/anthropic/")) {
			return ProviderAnthropic
		}
		return ProviderOpenAI
	}
	if strings.HasPrefix(strings.ToLower(model), "claude") {
		return ProviderAnthropic
	}
	return ProviderOpenAI
}
