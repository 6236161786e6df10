package attack

import (
	"net/url"
	"strings"
	"testing"
)

// TestTokens: a playground on every interface generates a token of 24
// random bytes (32 characters) and prints the URL that carries it; a short
// token given by the user is warned about.
func TestTokens(t *testing.T) {
	printed, p := playgroundPrinted(t, "", nil, "--host", "0.0.0.0")
	u, err := url.Parse(printed)
	if err != nil {
		t.Fatal(err)
	}
	if tok := u.Query().Get("token"); len(tok) < 32 {
		t.Errorf("generated token %q: %d characters, want 24 random bytes (32 or more)", tok, len(tok))
	}
	p.kill()

	_, p = playgroundPrinted(t, "", []string{"APEX_PLAYGROUND_TOKEN=hunter2"})
	// The warning comes before the URL is printed.
	if !strings.Contains(p.errors(), "warning: the playground token has 7 characters") {
		t.Errorf("no warning for a 7-character token: %q", p.errors())
	}
}
