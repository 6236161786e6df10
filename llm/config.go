package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Endpoint is where and how a role calls a model. In a role override,
// empty fields inherit from the model: section.
type Endpoint struct {
	// Provider is openai or anthropic (the wire protocol), or a preset
	// name from Presets (qwen, deepseek, ollama, …) that also gives the
	// base URL. Empty means inferred from BaseURL and Model.
	Provider    string
	BaseURL     string
	Model       string
	APIKey      string
	Temperature *float64
	MaxTokens   int
	NoTools     bool
	NoJSONMode  bool
	Timeout     time.Duration
	// Headers are extra HTTP headers; ExtraBody is a JSON object merged
	// into each request body (see Options).
	Headers   map[string]string
	ExtraBody json.RawMessage
	// Tier, in a role override, moves the role to another tier; in what
	// Config.Endpoint resolves, it is the role's tier.
	Tier Tier
	// Vision says whether the model reads images; nil means as
	// VisionModel says of its name.
	Vision *bool
	// Images is set by Config.Endpoint when the role is sent screenshots:
	// it reads the screen (RoleSetting.Screenshots) and its model reads
	// images (Multimodal).
	Images bool
}

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input  float64 `yaml:"input" json:"input"`
	Output float64 `yaml:"output" json:"output"`
}

// Cost is what u costs at p.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.PromptTokens)*p.Input + float64(u.CompletionTokens)*p.Output) / 1e6
}

// RoleSetting is a role's default temperature, max tokens and tier.
// Screenshots marks the roles that read the screen: their model gets the
// screenshot next to the Scene text when it reads images.
type RoleSetting struct {
	Temperature float64
	MaxTokens   int
	Tier        Tier
	Screenshots bool
}

// RoleDefaults are the settings a role gets unless apex.yaml says
// otherwise. The observer answers queries (aiQuery) from the screen.
var RoleDefaults = map[string]RoleSetting{
	"planner":      {0.2, 1500, TierStrong, false},
	"recovery":     {0.2, 600, TierStrong, false},
	"observer":     {0.0, 500, TierVision, true},
	"validator":    {0.0, 300, TierVision, true},
	"executor":     {0.1, 300, TierSmall, false},
	"reporter":     {0.3, 800, TierRules, false},
	"tracer":       {0.0, 300, TierRules, false},
	"orchestrator": {0.2, 800, TierRules, false},
}

// defaultRole is what a role not in RoleDefaults gets.
var defaultRole = RoleSetting{0.2, 1000, TierSmall, false}

// Config is the model configuration: the model: section of apex.yaml with
// the environment on top, and per-role overrides. Build it with LoadConfig
// (or by hand in tests); it is safe for concurrent use once built.
type Config struct {
	// Model is the default endpoint every role uses.
	Model Endpoint
	// Tiers give each tier its model over Model (see Tier); a tier not
	// here uses Model.
	Tiers map[Tier]Endpoint
	// Roles override their tier's model per role (planner, executor,
	// validator, …).
	Roles map[string]Endpoint
	// Prices by model name; models without one cost nothing in accounts.
	Prices map[string]Price
	// MaxRetries and Backoff tune retries (see Options).
	MaxRetries int
	Backoff    time.Duration
	// Accountant, when set, records every call's usage; LoadConfig sets one.
	Accountant *Accountant
	HTTPClient *http.Client
	Log        *slog.Logger
	// Sources says where each default setting came from ("APEX_MODEL_NAME",
	// "apex.yaml"), for messages.
	Sources map[string]string

	mu      sync.Mutex
	clients map[string]Client
}

// fileModel is the model: section of apex.yaml.
type fileModel struct {
	fileEndpoint `yaml:",inline"`
	MaxRetries   int                     `yaml:"max_retries"`
	Backoff      string                  `yaml:"backoff"`
	Prices       map[string]Price        `yaml:"prices"`
	Tiers        map[string]fileEndpoint `yaml:"tiers"`
	Roles        map[string]fileEndpoint `yaml:"roles"`
}

type fileEndpoint struct {
	Provider    string            `yaml:"provider"`
	BaseURL     string            `yaml:"base_url"`
	Name        string            `yaml:"name"`
	Model       string            `yaml:"model"`
	APIKey      string            `yaml:"api_key"`
	APIKeyEnv   string            `yaml:"api_key_env"`
	Temperature *float64          `yaml:"temperature"`
	MaxTokens   int               `yaml:"max_tokens"`
	NoTools     bool              `yaml:"no_tools"`
	NoJSONMode  bool              `yaml:"no_json_mode"`
	Headers     map[string]string `yaml:"headers"`
	ExtraBody   map[string]any    `yaml:"extra_body"`
	Timeout     string            `yaml:"timeout"`
	Tier        string            `yaml:"tier"`
	Vision      *bool             `yaml:"vision"`
}

// LoadConfig reads the model: section of file (apex.yaml; other sections
// are left to their owners) and then the environment through getenv.
// A file that does not exist, or file "", means environment only.
//
// Precedence, lowest first: built-in role defaults, apex.yaml's model:
// section, then APEX_MODEL_BASE_URL / APEX_MODEL_NAME / APEX_MODEL_API_KEY /
// APEX_MODEL_PROVIDER / APEX_MODEL_TIMEOUT and Midscene's
// MIDSCENE_MODEL_BASE_URL / MIDSCENE_MODEL_NAME / MIDSCENE_MODEL_API_KEY.
// The generic OPENAI_API_KEY / OPENAI_BASE_URL (also Midscene's older
// names) and ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL only fill what is still
// empty, so a key exported for other tools never overrides apex.yaml. Role
// overrides win over all of these for their role: apex.yaml's roles:, then
// APEX_<ROLE>_MODEL_NAME / _BASE_URL / _API_KEY and Midscene's intent
// variables (MIDSCENE_PLANNING_MODEL_* for the planner,
// MIDSCENE_LOCATE_MODEL_* for the executor, MIDSCENE_INSIGHT_MODEL_* for
// the validator and observer). Between the two, a role's tier (see Tier)
// may have its model under model.tiers: in apex.yaml, or in
// APEX_<TIER>_MODEL_NAME / _BASE_URL / _API_KEY (APEX_VISION_MODEL_NAME):
//
//	model:
//	  name: gpt-4o-mini          # every tier's default
//	  tiers:
//	    strong: {name: deepseek-chat, provider: deepseek, api_key_env: DEEPSEEK_API_KEY}
//	    vision: {name: qwen-vl-max, provider: qwen, api_key_env: DASHSCOPE_API_KEY}
//	  roles:
//	    executor: {tier: rules}  # never ask a model to find a target
//	    validator: {vision: true, name: my-local-vl}
func LoadConfig(file string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := &Config{Roles: map[string]Endpoint{}, Prices: map[string]Price{}, Sources: map[string]string{}, Accountant: NewAccountant()}
	if file != "" {
		data, err := os.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("llm: read %s: %w", file, err)
		default:
			if err := c.loadYAML(file, data, getenv); err != nil {
				return nil, err
			}
		}
	}
	if err := c.loadEnv(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) loadYAML(file string, data []byte, getenv func(string) string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return syntaxError(file, data, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return &ConfigError{File: file, Line: root.Line, Msg: "expected sections (model:, wda:, …), got " + describeNode(root)}
	}
	_, node := mapEntry(root, "model")
	if node == nil {
		return nil
	}
	if node.Kind == yaml.ScalarNode {
		// model: gpt-4o is shorthand for model: {name: gpt-4o}.
		c.Model.Model = node.Value
		c.Sources["model"] = file
		return nil
	}
	// Every key is checked, so a misspelt one is an error at its line, not
	// a setting silently ignored.
	if err := checkKeys(file, node, "model", fileModel{}); err != nil {
		return err
	}
	_, roles := mapEntry(node, "roles")
	_, prices := mapEntry(node, "prices")
	_, tiers := mapEntry(node, "tiers")
	for _, group := range []struct {
		n    *yaml.Node
		path string
		v    any
	}{{roles, "model.roles", fileEndpoint{}}, {tiers, "model.tiers", fileEndpoint{}}, {prices, "model.prices", Price{}}} {
		if group.n == nil || group.n.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(group.n.Content); i += 2 {
			if err := checkKeys(file, group.n.Content[i+1], group.path+"."+group.n.Content[i].Value, group.v); err != nil {
				return err
			}
		}
	}
	var m fileModel
	if err := node.Decode(&m); err != nil {
		return typeError(file, node, "model", err)
	}
	if m.Tier != "" {
		return at(file, node, "model", fieldErrorf("tier", "a tier belongs to a role (model.roles.<role>.tier); the model: section is the default of every tier"))
	}
	var err error
	if c.Model, err = m.endpoint(getenv); err != nil {
		return at(file, node, "model", err)
	}
	for _, k := range []string{"provider", "base_url", "model", "api_key"} {
		if c.Model.field(k) != "" {
			c.Sources[k] = file
		}
	}
	c.MaxRetries = m.MaxRetries
	if m.Backoff != "" {
		if c.Backoff, err = time.ParseDuration(m.Backoff); err != nil {
			return at(file, node, "model", fieldErrorf("backoff", "%q is not a duration (write e.g. 500ms)", m.Backoff))
		}
	}
	for name, p := range m.Prices {
		c.Prices[name] = p
	}
	for name, fe := range m.Tiers {
		kn, vn := mapEntry(tiers, name)
		t, err := parseTier(name)
		if err != nil {
			return &ConfigError{File: file, Line: kn.Line, Key: "model.tiers." + name, Msg: err.Error()}
		}
		if t == TierRules || fe.Tier != "" {
			return &ConfigError{File: file, Line: kn.Line, Key: "model.tiers." + name, Msg: "give a tier (strong, vision or small) its model; the rules tier has none"}
		}
		if c.Tiers == nil {
			c.Tiers = map[Tier]Endpoint{}
		}
		if c.Tiers[t], err = fe.endpoint(getenv); err != nil {
			return at(file, vn, "model.tiers."+name, err)
		}
	}
	for role, fe := range m.Roles {
		e, err := fe.endpoint(getenv)
		if err != nil {
			_, rn := mapEntry(roles, role)
			return at(file, rn, "model.roles."+role, err)
		}
		c.Roles[role] = e
	}
	return nil
}

// endpoint checks the settings and makes them an Endpoint; a wrong value
// is a fieldError naming its key.
func (f fileEndpoint) endpoint(getenv func(string) string) (Endpoint, error) {
	e := Endpoint{
		Provider: strings.ToLower(f.Provider), BaseURL: expandEnv(f.BaseURL, getenv),
		Model: firstNonEmpty(f.Model, f.Name), APIKey: expandEnv(f.APIKey, getenv),
		Temperature: f.Temperature, MaxTokens: f.MaxTokens, NoTools: f.NoTools, NoJSONMode: f.NoJSONMode,
		Headers: f.Headers, Vision: f.Vision,
	}
	if f.Tier != "" {
		t, err := parseTier(f.Tier)
		if err != nil {
			return e, fieldErrorf("tier", "%v", err)
		}
		e.Tier = t
	}
	if len(f.ExtraBody) > 0 {
		b, err := json.Marshal(f.ExtraBody)
		if err != nil {
			return e, fieldErrorf("extra_body", "%v", err)
		}
		e.ExtraBody = b
	}
	for k, v := range e.Headers {
		e.Headers[k] = expandEnv(v, getenv)
	}
	if f.Model != "" && f.Name != "" && f.Model != f.Name {
		return e, fieldErrorf("model", "both name: %q and model: %q; keep one", f.Name, f.Model)
	}
	if f.APIKeyEnv != "" && e.APIKey == "" {
		if e.APIKey = getenv(f.APIKeyEnv); e.APIKey == "" {
			return e, fieldErrorf("api_key_env", "%s is not set; export it", f.APIKeyEnv)
		}
	}
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil || d <= 0 {
			return e, fieldErrorf("timeout", "%q is not a duration (write e.g. 60s)", f.Timeout)
		}
		e.Timeout = d
	}
	if f.Temperature != nil && (*f.Temperature < 0 || *f.Temperature > 2) {
		return e, fieldErrorf("temperature", "%v is outside 0…2", *f.Temperature)
	}
	if f.MaxTokens < 0 {
		return e, fieldErrorf("max_tokens", "%d is negative", f.MaxTokens)
	}
	if e.Provider != "" {
		if _, ok := Presets[e.Provider]; !ok {
			return e, fieldErrorf("provider", "%q is not one of %s", f.Provider, presetNames())
		}
	}
	return e, nil
}

// expandEnv replaces ${NAME} with getenv(NAME), so keys stay out of files.
func expandEnv(s string, getenv func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return os.Expand(s, func(k string) string { return getenv(k) })
}

// envVar is one environment variable and the setting it fills.
type envVar struct {
	name, field string
	fillOnly    bool // only fills what apex.yaml left empty
}

var envVars = []envVar{
	{"APEX_MODEL_PROVIDER", "provider", false},
	{"APEX_MODEL_BASE_URL", "base_url", false},
	{"MIDSCENE_MODEL_BASE_URL", "base_url", false},
	{"APEX_MODEL_NAME", "model", false},
	{"MIDSCENE_MODEL_NAME", "model", false},
	{"APEX_MODEL_API_KEY", "api_key", false},
	{"MIDSCENE_MODEL_API_KEY", "api_key", false},
	{"OPENAI_BASE_URL", "base_url", true},
	{"OPENAI_API_KEY", "api_key", true},
}

func (c *Config) loadEnv(getenv func(string) string) error {
	set := map[string]bool{}
	for _, v := range envVars {
		val := strings.TrimSpace(getenv(v.name))
		if val == "" || set[v.field] || (v.fillOnly && c.Model.field(v.field) != "") {
			continue
		}
		set[v.field] = true
		c.Model.setField(v.field, val)
		c.Sources[v.field] = v.name
	}
	if p := c.Model.Provider; p != "" {
		c.Model.Provider = strings.ToLower(p)
		if _, ok := Presets[c.Model.Provider]; !ok {
			return fmt.Errorf("llm: %s=%q is not one of %s", c.Sources["provider"], p, presetNames())
		}
	}
	if c.protocol(c.Model) == ProviderAnthropic {
		for _, v := range []envVar{{"ANTHROPIC_BASE_URL", "base_url", true}, {"ANTHROPIC_API_KEY", "api_key", true}} {
			if val := strings.TrimSpace(getenv(v.name)); val != "" && c.Model.field(v.field) == "" {
				c.Model.setField(v.field, val)
				c.Sources[v.field] = v.name
			}
		}
	}
	c.loadRoleEnv(getenv)
	return c.loadSamplingEnv(getenv)
}

func (e *Endpoint) field(name string) string {
	switch name {
	case "provider":
		return e.Provider
	case "base_url":
		return e.BaseURL
	case "model":
		return e.Model
	case "api_key":
		return e.APIKey
	}
	return ""
}

func (e *Endpoint) setField(name, v string) {
	switch name {
	case "provider":
		e.Provider = v
	case "base_url":
		e.BaseURL = v
	case "model":
		e.Model = v
	case "api_key":
		e.APIKey = v
	}
}

// protocol is the wire protocol e speaks.
func (c *Config) protocol(e Endpoint) string {
	if p, ok := Presets[e.Provider]; ok {
		return p.Protocol
	}
	return inferProtocol(e.BaseURL, e.Model)
}

// Configured tells whether a default model is set, so the agent can run
// with a model rather than the offline rule planner.
func (c *Config) Configured() bool {
	return c != nil && c.Model.Model != ""
}

// RoleNames lists the roles with settings: the built-in ones and those
// apex.yaml overrides, sorted.
func (c *Config) RoleNames() []string {
	seen := map[string]bool{}
	for r := range RoleDefaults {
		seen[r] = true
	}
	if c != nil {
		for r := range c.Roles {
			seen[r] = true
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Endpoint resolves role's settings: the role's override over its tier's
// model over the model: section and environment, then the role's defaults
// and the provider's base URL. It fails with ErrRulesOnly for a role of
// tier rules, and with ErrNotConfigured, naming what to set, when no model
// name is known.
func (c *Config) Endpoint(role string) (Endpoint, error) {
	if c == nil {
		c = &Config{}
	}
	tier := c.Tier(role)
	if tier == TierRules {
		return Endpoint{Tier: TierRules}, fmt.Errorf("%w: %s is set to tier rules; give it tier: strong, vision or small under model.roles.%s in apex.yaml to use a model", ErrRulesOnly, role, role)
	}
	e := c.Model
	moved := false // the role calls another service than the default
	if t, ok := c.Tiers[tier]; ok {
		e, moved = c.over(e, t)
	}
	if o, ok := c.Roles[role]; ok {
		var m bool
		e, m = c.over(e, o)
		moved = moved || m
	}
	e.Tier = tier
	if e.Model == "" {
		return e, fmt.Errorf("%w for role %s: set APEX_MODEL_NAME (with APEX_MODEL_BASE_URL and APEX_MODEL_API_KEY), or name: under model: in apex.yaml", ErrNotConfigured, role)
	}
	d, ok := RoleDefaults[role]
	if !ok {
		d = defaultRole
	}
	if e.Temperature == nil {
		t := d.Temperature
		e.Temperature = &t
	}
	if e.MaxTokens == 0 {
		e.MaxTokens = d.MaxTokens
	}
	e.Images = d.Screenshots && e.Multimodal()
	proto := c.protocol(e)
	e.BaseURL = c.baseURL(e)
	e.Provider = proto
	if e.APIKey == "" && needsKey(e.BaseURL) {
		if moved {
			return e, fmt.Errorf("%w for role %s: %s at %s needs its own API key: set APEX_%s_MODEL_API_KEY (or api_key under model.roles.%s or model.tiers.%s in apex.yaml)", ErrNotConfigured, role, e.Model, e.BaseURL, strings.ToUpper(role), role, tier)
		}
		return e, fmt.Errorf("%w for role %s: %s at %s needs an API key: set APEX_MODEL_API_KEY (or model.api_key / api_key_env in apex.yaml)", ErrNotConfigured, role, e.Model, e.BaseURL)
	}
	return e, nil
}

// over puts o's settings over e, as a tier's model goes over the default
// and a role's over its tier's. moved reports that o calls another
// service than e, whose API key is then never sent to it.
func (c *Config) over(e, o Endpoint) (_ Endpoint, moved bool) {
	if o.Provider != "" || o.BaseURL != "" {
		// The key and headers in force are never sent to another service.
		if Origin(c.baseURL(o)) != Origin(c.baseURL(e)) {
			e.APIKey, e.Headers, moved = "", nil, true
		}
		e.Provider, e.BaseURL = o.Provider, o.BaseURL
	}
	if o.Model != "" && o.Model != e.Model {
		// Whether a model reads images is said of that model.
		e.Model, e.Vision = o.Model, nil
	}
	if o.Vision != nil {
		e.Vision = o.Vision
	}
	e.APIKey = firstNonEmpty(o.APIKey, e.APIKey)
	if o.Temperature != nil {
		e.Temperature = o.Temperature
	}
	if o.MaxTokens > 0 {
		e.MaxTokens = o.MaxTokens
	}
	if o.Timeout > 0 {
		e.Timeout = o.Timeout
	}
	e.NoTools = e.NoTools || o.NoTools
	e.NoJSONMode = e.NoJSONMode || o.NoJSONMode
	if len(o.Headers) > 0 {
		e.Headers = o.Headers
	}
	if len(o.ExtraBody) > 0 {
		e.ExtraBody = o.ExtraBody
	}
	return e, moved
}

// needsKey tells hosted services (which need an API key) from servers on
// this machine or the local network (Ollama, vLLM, LM Studio), which
// usually do not.
func needsKey(baseURL string) bool {
	for _, p := range Presets {
		if p.BaseURL == baseURL && !strings.HasPrefix(p.BaseURL, "http://127.0.0.1") {
			return true
		}
	}
	return false
}

// baseURL is e's API root: its own, its preset's, or its protocol's.
func (c *Config) baseURL(e Endpoint) string {
	if e.BaseURL != "" {
		return e.BaseURL
	}
	if p, ok := Presets[e.Provider]; ok {
		return p.BaseURL
	}
	return Presets[c.protocol(e)].BaseURL
}

// Client returns a client bound to role's settings. Calls through it carry
// the role, apply its temperature and max tokens unless the request sets
// its own, are priced from Prices and recorded in the Accountant. Clients
// are made once per role and shared.
func (c *Config) Client(role string) (Client, error) {
	e, err := c.Endpoint(role)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[role]; ok {
		return cl, nil
	}
	opts := Options{
		BaseURL: e.BaseURL, APIKey: e.APIKey, Model: e.Model,
		Temperature: e.Temperature, MaxTokens: e.MaxTokens,
		NoTools: e.NoTools, NoJSONMode: e.NoJSONMode, Timeout: e.Timeout, ExtraBody: e.ExtraBody,
		MaxRetries: c.MaxRetries, Backoff: c.Backoff, HTTPClient: c.HTTPClient, Log: c.Log,
	}
	if len(e.Headers) > 0 {
		opts.Header = http.Header{}
		for k, v := range e.Headers {
			opts.Header.Set(k, v)
		}
	}
	var inner Client
	if e.Provider == ProviderAnthropic {
		inner, err = NewAnthropic(opts)
	} else {
		inner, err = NewOpenAI(opts)
	}
	if err != nil {
		return nil, err
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cl := &roleClient{log: log, role: role, inner: inner, model: e.Model, prices: c.Prices, acct: c.Accountant, images: e.Images}
	if c.clients == nil {
		c.clients = map[string]Client{}
	}
	c.clients[role] = cl
	return cl, nil
}
