package wda

import "context"

// AlertText returns the text of the alert on screen; none is an error
// matching ErrNoAlert.
func (c *Client) AlertText(ctx context.Context) (string, error) {
	var s string
	err := c.sget(ctx, "/alert/text", &s)
	return s, err
}

// AcceptAlert presses the alert's accepting button (or name, when given).
func (c *Client) AcceptAlert(ctx context.Context, name string) error {
	return c.spost(ctx, "/alert/accept", alertBody(name), nil)
}

// DismissAlert presses the alert's dismissing button (or name, when given).
func (c *Client) DismissAlert(ctx context.Context, name string) error {
	return c.spost(ctx, "/alert/dismiss", alertBody(name), nil)
}

// AlertButtons lists the alert's button labels.
func (c *Client) AlertButtons(ctx context.Context) ([]string, error) {
	var b []string
	err := c.sget(ctx, "/wda/alert/buttons", &b)
	return b, err
}

func alertBody(name string) map[string]string {
	if name == "" {
		return map[string]string{}
	}
	return map[string]string{"name": name}
}
