package llm

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// midsceneIntents maps Midscene's per-intent model variables
// (MIDSCENE_PLANNING_MODEL_NAME, …) to the roles that do that work.
var midsceneIntents = map[string]string{
	"planner":   "MIDSCENE_PLANNING_MODEL",
	"executor":  "MIDSCENE_LOCATE_MODEL",
	"validator": "MIDSCENE_INSIGHT_MODEL",
	"observer":  "MIDSCENE_INSIGHT_MODEL",
}

// loadRoleEnv applies per-tier and per-role variables over apex.yaml's
// tiers and role overrides: APEX_<TIER>_MODEL_NAME / _BASE_URL / _API_KEY
// (APEX_VISION_MODEL_NAME), APEX_<ROLE>_MODEL_… (APEX_PLANNER_MODEL_NAME),
// then Midscene's intent variables for the matching role.
func (c *Config) loadRoleEnv(getenv func(string) string) {
	for _, t := range Tiers {
		if t == TierRules {
			continue
		}
		o, had := c.Tiers[t]
		if envEndpoint(&o, getenv, c.Sources, string(t), "APEX_"+strings.ToUpper(string(t))+"_MODEL") || had {
			if c.Tiers == nil {
				c.Tiers = map[Tier]Endpoint{}
			}
			c.Tiers[t] = o
		}
	}
	for _, role := range c.RoleNames() {
		prefixes := []string{"APEX_" + strings.ToUpper(role) + "_MODEL"}
		if m, ok := midsceneIntents[role]; ok {
			prefixes = append(prefixes, m)
		}
		o, had := c.Roles[role]
		if envEndpoint(&o, getenv, c.Sources, role, prefixes...) || had {
			c.Roles[role] = o
		}
	}
}

// envEndpoint sets o's model, base URL and API key from the first of the
// prefixes' _NAME, _BASE_URL and _API_KEY variables that is set, noting
// each in sources under name; it reports whether any was.
func envEndpoint(o *Endpoint, getenv func(string) string, sources map[string]string, name string, prefixes ...string) bool {
	changed := false
	for _, f := range []struct{ suffix, field string }{{"_NAME", "model"}, {"_BASE_URL", "base_url"}, {"_API_KEY", "api_key"}} {
		for _, p := range prefixes {
			if v := strings.TrimSpace(getenv(p + f.suffix)); v != "" {
				o.setField(f.field, v)
				sources[name+"."+f.field] = p + f.suffix
				changed = true
				break
			}
		}
	}
	return changed
}

// loadSamplingEnv reads the default temperature, max tokens, extra body
// JSON and timeout (Midscene's in milliseconds).
func (c *Config) loadSamplingEnv(getenv func(string) string) error {
	for _, name := range []string{"APEX_MODEL_TEMPERATURE", "MIDSCENE_MODEL_TEMPERATURE"} {
		if v := getenv(name); v != "" {
			t, err := strconv.ParseFloat(v, 64)
			if err != nil || t < 0 || t > 2 {
				return fmt.Errorf("llm: %s=%q is not a temperature between 0 and 2", name, v)
			}
			c.Model.Temperature = &t
			break
		}
	}
	for _, name := range []string{"APEX_MODEL_MAX_TOKENS", "MIDSCENE_MODEL_MAX_TOKENS"} {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("llm: %s=%q is not a positive number of tokens", name, v)
			}
			c.Model.MaxTokens = n
			break
		}
	}
	for _, name := range []string{"APEX_MODEL_EXTRA_BODY_JSON", "MIDSCENE_MODEL_EXTRA_BODY_JSON"} {
		if v := getenv(name); v != "" {
			var m map[string]any
			if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
				return fmt.Errorf("llm: %s=%q is not a JSON object", name, v)
			}
			c.Model.ExtraBody = json.RawMessage(v)
			break
		}
	}
	if v := getenv("APEX_MODEL_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("llm: APEX_MODEL_TIMEOUT=%q is not a duration (write e.g. 60s)", v)
		}
		c.Model.Timeout = d
	} else if v := getenv("MIDSCENE_MODEL_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return fmt.Errorf("llm: MIDSCENE_MODEL_TIMEOUT=%q is not a number of milliseconds", v)
		}
		c.Model.Timeout = time.Duration(ms) * time.Millisecond
	}
	return nil
}
