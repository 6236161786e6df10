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
//
// Secrets stay bound to the endpoint they were configured for: when e moves
// the default endpoint to another origin (scheme, host and port), the key
// and headers apex.yaml and the environment gave it are dropped, as are the
// keys of roles that inherit its base URL, and only e's own key (if any)
// goes there. A client that changes where the model is must send the key
// for it.
func (c *Config) Override(e Endpoint, source string) error {
	before := Origin(c.baseURL(c.Model))
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
	if Origin(c.baseURL(c.Model)) != before {
		c.unbindSecrets()
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

// unbindSecrets forgets the secrets configured for the default endpoint's
// old origin: its key and headers, and those of roles that call it.
func (c *Config) unbindSecrets() {
	c.Model.APIKey, c.Model.Headers = "", nil
	delete(c.Sources, "api_key")
	for name, o := range c.Roles {
		if o.Provider == "" && o.BaseURL == "" {
			o.APIKey, o.Headers = "", nil
			c.Roles[name] = o
		}
	}
}

// Origin is raw's scheme and host (with its port), lower-cased: where a
// key may be sent. Two base URLs of one origin reach the same server.
func Origin(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}
