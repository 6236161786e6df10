package runner

import "context"

// WDARequester is implemented by drivers that can send a raw
// WebDriverAgent request; runWdaRequest steps need it.
type WDARequester interface {
	WDARequest(ctx context.Context, method, endpoint string, body []byte) ([]byte, error)
}
