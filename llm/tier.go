package llm

import (
	"errors"
	"fmt"
	"strings"
)

// Tier is the kind of model a role needs. Each role has a default tier
// (RoleDefaults); apex.yaml's model.tiers gives each tier its model, and
// model.roles.<role>.tier moves a role to another tier. A tier without a
// model of its own uses the default model, so one model: line still serves
// every role.
type Tier string

// The tiers.
const (
	// TierStrong reasons over a whole task: planner, recovery.
	TierStrong Tier = "strong"
	// TierVision reads the screen, screenshots included when its model is
	// multimodal: observer, validator.
	TierVision Tier = "vision"
	// TierSmall is fast and cheap, one step at a time: executor.
	TierSmall Tier = "small"
	// TierRules calls no model: the role's rules decide (tracer, reporter,
	// orchestrator).
	TierRules Tier = "rules"
)

// Tiers lists the tiers in the order messages name them.
var Tiers = []Tier{TierStrong, TierVision, TierSmall, TierRules}

// ErrRulesOnly is what Endpoint and Client return for a role whose tier
// is rules: it calls no model.
var ErrRulesOnly = errors.New("llm: the role uses rules, no model")

func parseTier(s string) (Tier, error) {
	t := Tier(strings.ToLower(strings.TrimSpace(s)))
	for _, k := range Tiers {
		if t == k {
			return t, nil
		}
	}
	names := make([]string, len(Tiers))
	for i, k := range Tiers {
		names[i] = string(k)
	}
	return "", fmt.Errorf("tier %q is not one of %s", s, strings.Join(names, ", "))
}

// Tier is the tier role runs at: its own tier: in apex.yaml, or its
// default. A role whose default is rules but whose override names a model
// gets "" (no tier: the default model with the override on top).
func (c *Config) Tier(role string) Tier {
	var o Endpoint
	if c != nil {
		o = c.Roles[role]
	}
	if o.Tier != "" {
		return o.Tier
	}
	d, ok := RoleDefaults[role]
	if !ok {
		d = defaultRole
	}
	if d.Tier == TierRules && (o.Model != "" || o.Provider != "" || o.BaseURL != "") {
		return ""
	}
	return d.Tier
}

// visionFamilies are parts of model names that read images, matched
// without regard to case. A model not named here reads images only when
// apex.yaml says vision: true for it.
var visionFamilies = []string{
	"gpt-4o", "gpt-4.1", "gpt-5", "claude", "gemini", "-vl", "vl-", "vision",
	"glm-4.5v", "glm-4.6v", "llava", "pixtral", "ui-tars",
}

// VisionModel reports whether a model of this name is known to read
// images.
func VisionModel(name string) bool {
	n := strings.ToLower(name)
	for _, f := range visionFamilies {
		if strings.Contains(n, f) {
			return true
		}
	}
	return false
}

// Multimodal reports whether the endpoint's model reads images: as its
// vision: setting says, or else as VisionModel says of its name.
func (e Endpoint) Multimodal() bool {
	if e.Vision != nil {
		return *e.Vision
	}
	return VisionModel(e.Model)
}

// SeesImages reports whether the role c (a client Config.Client made)
// serves is sent screenshots: it reads the screen and its model reads
// images (Endpoint.Images). Other clients say no.
func SeesImages(c Client) bool {
	m, ok := c.(interface{ SendImages() bool })
	return ok && m.SendImages()
}
