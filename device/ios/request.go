package ios

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// WDARequest sends one WebDriverAgent request as given (Midscene's
// runWdaRequest step) and returns the value of its answer. endpoint is
// relative to the WebDriverAgent URL (/status, /wda/screen,
// /session/ID/…); body, when given, is its JSON. Only GET is retried
// when the link breaks: another request may have acted.
func (d *Driver) WDARequest(ctx context.Context, method, endpoint string, body []byte) ([]byte, error) {
	method = strings.ToUpper(strings.TrimSpace(method))
	if method == "" {
		method = http.MethodGet
	}
	if !strings.HasPrefix(endpoint, "/") {
		endpoint = "/" + endpoint
	}
	var payload any
	if len(body) > 0 {
		if !json.Valid(body) {
			return nil, fmt.Errorf("ios %s: WDA %s %s: the body is not JSON", d.id, method, endpoint)
		}
		payload = json.RawMessage(body)
	}
	var out []byte
	err := d.call(ctx, "WDA "+method+" "+endpoint, method == http.MethodGet, d.opts.Timeout, func(ctx context.Context) error {
		r, err := d.c.Do(ctx, method, endpoint, payload)
		if err != nil {
			return err
		}
		out = r.Value
		return nil
	})
	return out, err
}
