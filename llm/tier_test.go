package llm

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const tiersYAML = `
model:
  provider: qwen
  name: qwen-plus
  api_key: ${DASHSCOPE_API_KEY}
  tiers:
    strong: {provider: deepseek, name: deepseek-reasoner, api_key_env: DEEPSEEK_API_KEY}
    vision: {name: qwen-vl-max}
  roles:
    executor: {tier: rules}
    reporter: {name: qwen-turbo}
    observer: {name: my-local-model, vision: true}
    recovery: {tier: vision}
`

// TestTiers pins how a role finds its model: its override over its tier's
// model over the default, rules tiers calling none, and which models read
// images.
func TestTiers(t *testing.T) {
	c, err := LoadConfig(writeYAML(t, tiersYAML), env("DASHSCOPE_API_KEY", "sk-dash", "DEEPSEEK_API_KEY", "sk-deep"))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Tier        Tier
		Model, Key  string
		Multimodal  bool
		MaxTokens   int
		RulesOnly   bool
		Images      bool
		ClientError bool
	}
	want := map[string]row{
		"planner": {TierStrong, "deepseek-reasoner", "sk-deep", false, 1500, false, false, false},
		// Moved to the vision tier, but not a role that reads the screen.
		"recovery":  {TierVision, "qwen-vl-max", "sk-dash", true, 600, false, false, false},
		"validator": {TierVision, "qwen-vl-max", "sk-dash", true, 300, false, true, false},
		"observer":  {TierVision, "my-local-model", "sk-dash", true, 500, false, true, false},
		"executor":  {TierRules, "", "", false, 0, true, false, true},
		"tracer":    {TierRules, "", "", false, 0, true, false, true},
		// A rules role given a model uses it, with no tier.
		"reporter": {"", "qwen-turbo", "sk-dash", false, 800, false, false, false},
		// A role of its own runs at the small tier: the default model here.
		"summariser": {TierSmall, "qwen-plus", "sk-dash", false, 1000, false, false, false},
	}
	for role, w := range want {
		e, err := c.Endpoint(role)
		cl, cerr := c.Client(role)
		got := row{c.Tier(role), e.Model, e.APIKey, e.Multimodal(), e.MaxTokens, errors.Is(err, ErrRulesOnly), e.Images, cerr != nil}
		if cl != nil && SeesImages(cl) != e.Images {
			t.Errorf("%s: SeesImages(client) = %v, Endpoint's Images = %v", role, SeesImages(cl), e.Images)
		}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", role, d)
		}
		if w.RulesOnly && !strings.Contains(err.Error(), "model.roles."+role) {
			t.Errorf("%s: %v; want it to say where to give the role a tier", role, err)
		}
		if err != nil && !w.RulesOnly {
			t.Errorf("%s: %v", role, err)
		}
	}
}

// A single default model serves every tier; its name says whether it
// reads images, unless vision: says otherwise.
func TestTiersDefaultModel(t *testing.T) {
	for _, tt := range []struct {
		yaml   string
		vision bool
	}{
		{"model: {name: gpt-4o-mini}\n", true},
		{"model: {name: deepseek-chat, provider: deepseek, api_key: k}\n", false},
		{"model: {name: deepseek-chat, provider: deepseek, api_key: k, vision: true}\n", true},
		{"model: {name: gpt-4o, vision: false}\n", false},
		// The vision flag belongs to the model it was said of.
		{"model: {name: my-vl, vision: true, roles: {validator: {name: gpt-3.5-turbo}}}\n", false},
	} {
		c, err := LoadConfig(writeYAML(t, tt.yaml), env("OPENAI_API_KEY", "sk"))
		if err != nil {
			t.Fatalf("%s: %v", tt.yaml, err)
		}
		for _, role := range []string{"planner", "validator", "executor"} {
			e, err := c.Endpoint(role)
			if err != nil {
				t.Fatalf("%s %s: %v", tt.yaml, role, err)
			}
			if role == "validator" && e.Multimodal() != tt.vision {
				t.Errorf("%s: validator's %s multimodal = %v, want %v", tt.yaml, e.Model, e.Multimodal(), tt.vision)
			}
		}
	}
}

func TestTierErrors(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"model:\n  name: m\n  roles: {planner: {tier: huge}}\n", `model.roles.planner.tier: tier "huge" is not one of strong, vision, small, rules`},
		{"model:\n  name: m\n  tiers: {medium: {name: x}}\n", `model.tiers.medium: tier "medium" is not one of`},
		{"model:\n  name: m\n  tiers: {rules: {name: x}}\n", "the rules tier has none"},
		{"model:\n  name: m\n  tiers: {vision: {name: x, tier: small}}\n", "give a tier (strong, vision or small) its model"},
		{"model:\n  name: m\n  tier: strong\n", "a tier belongs to a role"},
		{"model:\n  name: m\n  roles: {planner: {vision: maybe}}\n", "vision"},
	} {
		_, err := LoadConfig(writeYAML(t, tt.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one containing %q", tt.yaml, err, tt.want)
		}
	}
}

func TestVisionModel(t *testing.T) {
	for name, want := range map[string]bool{
		"gpt-4o": true, "gpt-4o-mini": true, "gpt-4.1-mini": true, "claude-sonnet-4-5": true, "gemini-2.5-flash": true,
		"qwen-vl-max": true, "qwen2.5-vl-72b-instruct": true, "Qwen3-VL-Plus": true, "glm-4.6v": true,
		"llama3.2-vision": true, "UI-TARS-1.5-7B": true, "doubao-1.5-vision-pro": true,
		"deepseek-chat": false, "qwen-max": false, "gpt-3.5-turbo": false, "llama3.1:8b": false, "glm-4.6": false, "scripted": false,
	} {
		if got := VisionModel(name); got != want {
			t.Errorf("VisionModel(%q) = %v, want %v", name, got, want)
		}
	}
}

// A tier's model can come from the environment: APEX_<TIER>_MODEL_*,
// under a role's own variables.
func TestTierEnv(t *testing.T) {
	c, err := LoadConfig("", env(
		"APEX_MODEL_NAME", "gpt-4o-mini", "OPENAI_API_KEY", "sk",
		"APEX_STRONG_MODEL_NAME", "o3", "APEX_VISION_MODEL_NAME", "qwen-vl-max",
		"APEX_VISION_MODEL_BASE_URL", "https://dashscope.aliyuncs.com/compatible-mode/v1", "APEX_VISION_MODEL_API_KEY", "sk-dash",
		"APEX_VALIDATOR_MODEL_NAME", "qwen3-vl-plus",
	))
	if err != nil {
		t.Fatal(err)
	}
	for role, want := range map[string]string{"planner": "o3/sk", "observer": "qwen-vl-max/sk-dash", "validator": "qwen3-vl-plus/sk-dash", "executor": "gpt-4o-mini/sk"} {
		e, err := c.Endpoint(role)
		if err != nil || e.Model+"/"+e.APIKey != want {
			t.Errorf("%s: %s/%s, %v; want %s", role, e.Model, e.APIKey, err, want)
		}
	}
	if c.Sources["vision.model"] != "APEX_VISION_MODEL_NAME" {
		t.Errorf("sources %v", c.Sources)
	}
}
