package plane_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/plane"
	"golang.org/x/crypto/bcrypt"
)

// TestTokenByHash: a plane given only the hash of its token lets in the
// clients that know the token and no one else; off loopback it will not
// start without one.
func TestTokenByHash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := plane.Start(ctx, plane.Options{DataDir: t.TempDir(), Listen: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "--token") {
		t.Errorf("off loopback without a token: %v, want a refusal naming --token", err)
	}
	const token = "correct-horse-battery-staple"
	// The lowest bcrypt cost: the race detector makes each check of a
	// real one (farm.HashToken) take seconds.
	h, err := bcrypt.GenerateFromPassword([]byte(token), bcrypt.MinCost)
	hash := string(h)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plane.Start(ctx, plane.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Token: hash})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, tc := range []struct {
		name, token string
		ok          bool
	}{
		{"the token", token, true},
		{"the hash itself", hash, false},
		{"another token", "wrong", false},
		{"no token", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, _, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: tc.token})
			if err == nil {
				nc.Close()
			}
			if (err == nil) != tc.ok {
				t.Errorf("connect: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
