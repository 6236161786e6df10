package action_test

import (
	"context"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
)

// TestInputClearEmptiesTheField: through adbd, the Login app's username
// field holding "hello" is emptied by Input mode clear (and by ClearInput)
// even when the Scene the field was found on lags behind it, reading
// "hell" or "hello" while the field holds more; the state is read from
// the phone.
func TestInputClearEmptiesTheField(t *testing.T) {
	tests := []struct {
		name       string
		seen, more string // the Scene is read when the field holds seen; then more is typed
		call       func(l *action.Locator) action.Call
		want       string
	}{
		{"clear, fresh read", "hello", "", inputClear, ""},
		{"clear, the read lags one character", "hell", "o", inputClear, ""},
		{"clear, the read lags a word", "he", "llo world", inputClear, ""},
		{"ClearInput, the read lags", "hell", "o", func(l *action.Locator) action.Call {
			return action.ClearInput.MustCall(&action.ClearInputParams{Locate: l})
		}, ""},
		{"replace, the read lags", "hell", "o", func(l *action.Locator) action.Call {
			return action.Input.MustCall(&action.InputParams{Locate: l, Value: "demo"})
		}, "demo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dev, d := labtest.App(t, "com.apex.login")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			p := perceive.New(d, &perceive.Options{Mode: perceive.Off})
			defer p.Close()
			look := func() *scene.Scene {
				s, err := p.Observe(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return s.Scene
			}
			field, err := locate.Find(look(), action.Locator{ID: "username"})
			if err != nil {
				t.Fatal(err)
			}
			dev.Phone.Tap(field.Bounds.Center())
			dev.Phone.InputText(tc.seen)
			seen := look()
			if tc.more != "" {
				dev.Phone.InputText(tc.more)
			}
			env := &action.Env{Driver: d, Resolver: &locate.Live{Scene: seen, Observe: func(ctx context.Context) (*scene.Scene, error) {
				s, err := p.Observe(ctx)
				if err != nil {
					return nil, err
				}
				return s.Scene, nil
			}}}
			if err := tc.call(&action.Locator{ID: "username"}).Run(ctx, env); err != nil {
				t.Fatal(err)
			}
			st, err := dev.Phone.State("com.apex.login")
			if err != nil {
				t.Fatal(err)
			}
			if st["username"] != tc.want {
				t.Errorf("username = %q, want %q", st["username"], tc.want)
			}
		})
	}
}

func inputClear(l *action.Locator) action.Call {
	return action.Input.MustCall(&action.InputParams{Locate: l, Mode: "clear"})
}
