//go:build !apexlite

package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/wda"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/spf13/cobra"
)

// DoOptions are the inputs of `apex do`.
type DoOptions struct {
	Device DeviceFlags
	Action string
	Params []string // k=v
	JSON   string   // --params '{…}'
	// Session is --session: drive the device of an agent session (MCP's
	// device-hub profile) instead of choosing one with the device flags.
	Session string
}

func newCmdDo(env *Env) *cobra.Command {
	opts := &DoOptions{}
	cmd := &cobra.Command{
		Use:   "do ACTION [--param k=v]...",
		Short: "Run one action of the action space on a device",
		Long: `Run any action of the device's action space directly — the same actions
scripts and models use, so this command can do whatever they can. Params are
given as k=v (typed by the action's schema: numbers, booleans, or JSON for
objects) or all at once with --params '{"k": …}'. Params that locate an element
("Sign in", {"text": "OK"}) are found on the current screen.

With --sim the action runs on a fresh simulated phone that ends with the
command; to run several commands on one phone, start 'apex sim' in another
terminal, 'adb connect' the address it prints, and use --device.

Run 'apex do --list' to see the actions and their params.`,
		Example: `  apex do tap --sim --param locate="Settings"
  apex do input --device emulator-5554 --param locate=Search --param value="red shoes"
  apex do scroll --param direction=down --param distance=600
  apex do --list`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeActions,
		RunE: func(cmd *cobra.Command, args []string) error {
			list, _ := cmd.Flags().GetBool("list")
			if list {
				return doList(cmd.Context(), env, &opts.Device)
			}
			if len(args) == 0 {
				return fmt.Errorf("name an action (apex do --list shows them)")
			}
			opts.Action = args[0]
			return doRun(cmd.Context(), env, opts)
		},
	}
	opts.Device.Register(cmd)
	cmd.Flags().StringArrayVarP(&opts.Params, "param", "p", nil, "an action param as k=v; repeatable")
	cmd.Flags().StringVar(&opts.JSON, "params", "", "all params as one JSON object")
	cmd.Flags().StringVar(&opts.Session, "session", "", "act on the device of this session (the id apex mcp --profile device-hub's device_open printed); no device flags with it")
	cmd.Flags().Bool("list", false, "list the actions and their params")
	return cmd
}

func doRun(ctx context.Context, env *Env, opts *DoOptions) error {
	// Name and params are checked before a device is opened, so a typo
	// costs nothing and reads the same with no device attached.
	a, err := findAction(opts.Action)
	if err != nil {
		return err
	}
	raw, err := doParams(a, opts)
	if err != nil {
		return err
	}
	if _, err := a.Decode(raw); err != nil {
		return &doError{action: a.Name(), err: err}
	}
	d, t, release, err := openDoDevice(ctx, env, opts)
	if err != nil {
		return err
	}
	defer release()
	space := action.ForPlatform(t.Platform)
	if a, err = space.Find(opts.Action); err != nil {
		return fmt.Errorf("%s: %w", t.ID, err)
	}
	var hit []action.Target // what the action's locators found, in order
	resolve := screenResolver(d)
	actEnv := &action.Env{Driver: d, Log: env.Log, Resolver: action.ResolverFunc(func(ctx context.Context, l action.Locator) (action.Target, error) {
		t, err := resolve.Resolve(ctx, l)
		if err == nil {
			hit = append(hit, t)
		}
		return t, err
	})}
	start := time.Now()
	if err := a.Run(ctx, actEnv, raw); err != nil {
		return &doError{action: a.Name(), device: t.ID, err: err}
	}
	took := time.Since(start)
	if err := noteSessionApp(opts, a, raw); err != nil {
		return err
	}
	if env.JSON {
		out := map[string]any{"device": t.ID, "action": a.Name(), "params": raw, "ok": true, "ms": took.Milliseconds(), "targets": hit}
		if actEnv.Answer != nil {
			out["answer"] = actEnv.Answer
		}
		return env.PrintJSON(out)
	}
	line := a.Name()
	for _, h := range hit {
		line += " " + targetText(h)
	}
	if actEnv.Answer != nil {
		answer, _ := json.Marshal(actEnv.Answer)
		line += fmt.Sprintf(" (the device reports %s)", answer)
	}
	_, err = fmt.Fprintf(env.Out, "%s done on %s in %v\n", line, t.ID, took.Round(time.Millisecond))
	return err
}

// targetText names what a locator found: the element's id, type and
// label, and the point acted on.
func targetText(t action.Target) string {
	at := fmt.Sprintf("at %d,%d", t.Point.X, t.Point.Y)
	e := t.Element
	if e == nil {
		return at
	}
	label := cmp.Or(e.Text, e.Desc, e.ResourceID)
	if label != "" {
		label = " " + strconv.Quote(label)
	}
	return fmt.Sprintf("%s %s%s %s", e.ID, e.Type, label, at)
}

// doList prints the action space of the device the flags name: --sim's
// platform, an iPhone for --device wda:URL, else the platform of the
// device --device finds (which must exist). With neither, Android's, and
// where iPhones' are.
func doList(ctx context.Context, env *Env, f *DeviceFlags) error {
	platform, note := device.Android, ""
	switch {
	case f.Sim && f.ID != "":
		return fmt.Errorf("--device and --sim both given: use one")
	case f.Sim && f.SimPlatform == "ios":
		platform = device.IOS
	case f.Sim:
	case strings.HasPrefix(f.ID, wdaPrefix):
		if _, err := wda.ParseURL(strings.TrimPrefix(f.ID, wdaPrefix)); err != nil {
			return fmt.Errorf("--device %s: %w", f.ID, err)
		}
		platform = device.IOS
	case f.ID != "":
		hosts, err := deviceHosts(env)
		if err != nil {
			return err
		}
		t, err := device.NewRegistry(hosts...).Resolve(ctx, f.ID)
		if err != nil {
			return err
		}
		platform = t.Platform
	default:
		note = "\nThese are an Android device's; an iPhone's: apex do --list --sim=ios (or --device wda:URL).\n"
	}
	_, err := fmt.Fprint(env.Out, action.ForPlatform(platform).Describe()+note)
	return err
}

// doPlatforms are the platforms whose actions `apex do` knows, the first
// being the one --list describes.
var doPlatforms = []device.Platform{device.Android, device.IOS}

// findAction finds name (any case, or an alias) on any platform.
func findAction(name string) (*action.Action, error) {
	for _, p := range doPlatforms {
		if a, ok := action.ForPlatform(p).Lookup(name); ok {
			return a, nil
		}
	}
	return nil, fmt.Errorf("no action %q: use one of %s (apex do --list describes them)",
		name, strings.Join(action.ForPlatform(doPlatforms[0]).Names(), ", "))
}

// doError is an action that failed: it names the action and device once,
// and says how to fix params that were wrong.
type doError struct {
	action, device string
	err            error
}

func (e *doError) Error() string {
	msg := e.action
	if e.device != "" {
		msg += " on " + e.device
	}
	msg += ": " + strings.TrimPrefix(e.err.Error(), e.action+": ")
	if errors.Is(e.err, action.ErrInvalidParams) {
		msg += "; set params with --param name=value (apex do --list shows every action's)"
	}
	return msg
}

func (e *doError) Unwrap() error { return e.err }

// screenResolver finds locators on a fresh Scene of the device's screen,
// observed at each Resolve so actions that scroll see the new screen.
func screenResolver(d device.Driver) action.Resolver {
	return action.ResolverFunc(func(ctx context.Context, l action.Locator) (action.Target, error) {
		src, err := d.Source(ctx)
		if err != nil {
			return action.Target{}, err
		}
		s, err := scene.FromSource(src.Data, nil)
		if err != nil {
			return action.Target{}, fmt.Errorf("reading the screen: %w", err)
		}
		return locate.New(s).Resolve(ctx, l)
	})
}

// doParams turns --params and --param k=v into the action's JSON params.
func doParams(a *action.Action, opts *DoOptions) (json.RawMessage, error) {
	params := map[string]any{}
	if opts.JSON != "" {
		err := json.Unmarshal([]byte(opts.JSON), &params)
		if err == nil && params == nil {
			err = errors.New("null")
		}
		if err != nil {
			return nil, fmt.Errorf("--params %s: want a JSON object such as '{\"locate\": \"OK\"}': %w", opts.JSON, err)
		}
	}
	props := map[string]*jsonschema.Schema{}
	if s := a.Schema(); s != nil && s.Properties != nil {
		props = s.Properties
	}
	locators := a.LocatorFields()
	for _, kv := range opts.Params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--param %q: write it as name=value", kv)
		}
		val, err := paramValue(k, v, props[k], slices.Contains(locators, k))
		if err != nil {
			return nil, err
		}
		params[k] = val
	}
	return json.Marshal(params)
}

// paramValue types one k=v by the schema: strings stay strings, numbers and
// booleans are parsed, locators are text unless they are a JSON object, and
// anything else is tried as JSON first. A value that fits none of a field's
// types is left for the action's validation, which names what it expected.
func paramValue(k, v string, s *jsonschema.Schema, locator bool) (any, error) {
	var types []string
	if s != nil {
		for _, t := range append([]string{s.Type}, s.Types...) {
			if t != "" && t != "null" {
				types = append(types, t)
			}
		}
	}
	want := func(what string) error {
		if s != nil && s.Description != "" {
			what += " (" + s.Description + ")"
		}
		return fmt.Errorf("--param %s=%s: want %s", k, v, what)
	}
	switch {
	case locator:
		if strings.HasPrefix(strings.TrimSpace(v), "{") {
			var obj map[string]any
			if err := json.Unmarshal([]byte(v), &obj); err != nil {
				return nil, fmt.Errorf("--param %s: locator object is not JSON: %w", k, err)
			}
			return obj, nil
		}
		return v, nil
	case len(types) == 1 && types[0] == "string":
		return v, nil
	case slices.Contains(types, "integer") || slices.Contains(types, "number"):
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			return n, nil
		}
		if slices.Contains(types, "string") {
			return v, nil
		}
		return nil, want("a number")
	case slices.Contains(types, "boolean"):
		if b, err := strconv.ParseBool(v); err == nil {
			return b, nil
		}
		return nil, want("true or false")
	}
	var j any
	if err := json.Unmarshal([]byte(v), &j); err == nil {
		return j, nil
	}
	return v, nil
}
