package llm

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Override puts the non-empty fields of e (provider, base URL, model, API
// key) over the default endpoint, as settings given at run time (a
// playground's model settings) win over apex.yaml and the environment.
// source names them in Sources. It checks what it can without calling the
// model: a known provider, an http(s) base URL, and that every role then
// resolves (a model name, and a key where the service needs one).
func (c *Config) Override(e Endpoint, source string) error {
	if p := strings.ToLower(strings.TrimSpace(e.Provider)); p != "" {
		if _, ok := Presets[p]; !ok {
			return fmt.Errorf("provider %q is not one of %s", e.Provider, presetNames())
		}
		c.Model.Provider = p
		c.Sources["provider"] = source
	}
	if b := strings.TrimSpace(e.BaseURL); b != "" {
		u, err := url.Parse(b)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("base URL %q: want http(s)://host[:port]/path, e.g. https://api.openai.com/v1", e.BaseURL)
		}
		c.Model.BaseURL = strings.TrimRight(b, "/")
		c.Sources["base_url"] = source
	}
	for _, f := range []string{"model", "api_key"} {
		if v := strings.TrimSpace(e.field(f)); v != "" {
			c.Model.setField(f, v)
			c.Sources[f] = source
		}
	}
	for _, role := range c.RoleNames() {
		if _, err := c.Endpoint(role); err != nil && !errors.Is(err, ErrRulesOnly) {
			return err
		}
	}
	return nil
}
