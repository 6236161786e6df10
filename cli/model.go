//go:build !apexlite

package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/apexagent/apex/llm"
	"github.com/spf13/cobra"
)

// ModelTestOptions are the inputs of `apex model test`.
type ModelTestOptions struct {
	Config  string   // apex.yaml path
	Roles   []string // roles to test; empty means every role
	Timeout time.Duration
	Image   bool // also send a small PNG, to check the model reads images
	Getenv  func(string) string
}

// ModelTestResult is one endpoint's answer, shared by the roles that use it.
type ModelTestResult struct {
	Roles            []string  `json:"roles"`
	Uses             []RoleUse `json:"uses"` // how each of Roles uses the model
	Provider         string    `json:"provider"`
	Model            string    `json:"model"`
	BaseURL          string    `json:"base_url"`
	OK               bool      `json:"ok"`
	LatencyMS        int64     `json:"latency_ms"`
	PromptTokens     int       `json:"prompt_tokens"`
	CompletionTokens int       `json:"completion_tokens"`
	Answer           string    `json:"answer,omitempty"`
	Error            string    `json:"error,omitempty"`
}

// RoleUse is how a role uses its model: at which tier, and whether it is
// sent screenshots. A role at the rules tier calls no model.
type RoleUse struct {
	Role   string `json:"role"`
	Tier   string `json:"tier,omitempty"` // "" for a role given a model of its own
	Model  string `json:"model,omitempty"`
	Images bool   `json:"images"`
}

func newCmdModel(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Check the language models the AI steps use",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCmdModelTest(env))
	return cmd
}

func newCmdModelTest(env *Env) *cobra.Command {
	opts := &ModelTestOptions{Getenv: os.Getenv}
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Send a tiny request to each configured model endpoint",
		Long: `Send a tiny request ("ping") to every model endpoint the roles use, and
print each endpoint's model, latency and tokens. Roles that share an
endpoint are tested once. Exits 1 if any endpoint fails.

Models are configured in the model: section of apex.yaml or with
APEX_MODEL_BASE_URL, APEX_MODEL_NAME and APEX_MODEL_API_KEY (Midscene's
MIDSCENE_MODEL_* and OPENAI_API_KEY / OPENAI_BASE_URL work too); a role can
have its own with APEX_<ROLE>_MODEL_NAME / _BASE_URL / _API_KEY or
model.roles.<role> in apex.yaml. Each role runs at a tier — strong (planner,
recovery), vision (observer, validator), small (executor) or rules (reporter,
tracer, orchestrator: no model) — whose model model.tiers.<tier> may give;
a role can move with model.roles.<role>.tier. The first table says which
model each role uses and whether it is sent screenshots (a role that reads
the screen, with a model that reads images: a known family, or vision: true).
With --image the check also sends a small PNG, to see that the model reads
screenshots.`,
		Example: `  APEX_MODEL_NAME=qwen-vl-max APEX_MODEL_PROVIDER=qwen APEX_MODEL_API_KEY=sk-… apex model test
  apex model test --role planner --config ci/apex.yaml
  apex model test --image
  apex --json model test`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return modelTestRun(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Config, "config", "", configUsage)
	cmd.Flags().StringSliceVar(&opts.Roles, "role", nil, "test only these roles (repeatable; default: every role)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 30*time.Second, "how long each endpoint may take to answer")
	cmd.Flags().BoolVar(&opts.Image, "image", false, "send a small red PNG too and ask its colour (checks the model reads screenshots)")
	return cmd
}

func modelTestRun(ctx context.Context, env *Env, opts *ModelTestOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := loadModelConfig(env, opts.Config, opts.Getenv)
	if err != nil {
		return err
	}
	if !cfg.Configured() && len(cfg.Roles) == 0 {
		return fmt.Errorf("no model configured: set APEX_MODEL_NAME, APEX_MODEL_BASE_URL and APEX_MODEL_API_KEY (or Midscene's MIDSCENE_MODEL_NAME / MIDSCENE_MODEL_BASE_URL / MIDSCENE_MODEL_API_KEY), or add a model: section to apex.yaml (here, in a parent directory, or in $XDG_CONFIG_HOME/apex/)")
	}
	if opts.Timeout > 0 {
		cfg.Model.Timeout = opts.Timeout
		for r, o := range cfg.Roles {
			o.Timeout = 0
			cfg.Roles[r] = o
		}
	}
	results, uses, err := checkModels(ctx, cfg, opts.Roles, opts.Image)
	if err != nil {
		return err
	}
	if err := printModelTest(env, uses, results); err != nil {
		return err
	}
	failed := 0
	for _, r := range results {
		if !r.OK {
			failed++
		}
	}
	if failed > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d model endpoints failed", failed, len(results))}
	}
	return nil
}

// checkModels asks each endpoint the roles use for a short answer, once
// per endpoint, all at once. uses says how every role asked about uses its
// model, the rules roles' included.
func checkModels(ctx context.Context, cfg *llm.Config, roles []string, withImage bool) (results []ModelTestResult, uses []RoleUse, err error) {
	cfg.MaxRetries = -1 // a connectivity check reports the first failure
	groups, order, uses, err := groupRoles(cfg, roles)
	if err != nil {
		return nil, nil, err
	}
	results = make([]ModelTestResult, len(order))
	var wg sync.WaitGroup
	for i, key := range order {
		wg.Go(func() { results[i] = pingEndpoint(ctx, cfg, groups[key], withImage) })
	}
	wg.Wait()
	return results, uses, nil
}

type endpointGroup struct {
	roles []string
	uses  []RoleUse
	ep    llm.Endpoint
}

// groupRoles resolves each role and groups those that call the same
// endpoint, so each is pinged once. Roles named on the command line must
// resolve, or be at the rules tier; of the rest, those without a model
// are skipped.
func groupRoles(cfg *llm.Config, only []string) (map[string]*endpointGroup, []string, []RoleUse, error) {
	roles := only
	if len(roles) == 0 {
		roles = cfg.RoleNames()
	}
	groups := map[string]*endpointGroup{}
	var order []string
	var uses []RoleUse
	var firstErr error
	for _, role := range roles {
		ep, err := cfg.Endpoint(role)
		if errors.Is(err, llm.ErrRulesOnly) {
			uses = append(uses, RoleUse{Role: role, Tier: string(llm.TierRules)})
			continue
		}
		if err != nil {
			if len(only) > 0 || !errors.Is(err, llm.ErrNotConfigured) {
				return nil, nil, nil, err
			}
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		use := RoleUse{Role: role, Tier: string(ep.Tier), Model: ep.Model, Images: ep.Images}
		uses = append(uses, use)
		key := strings.Join([]string{ep.Provider, ep.BaseURL, ep.Model, ep.APIKey}, "\x00")
		if g, ok := groups[key]; ok {
			g.roles = append(g.roles, role)
			g.uses = append(g.uses, use)
			continue
		}
		groups[key] = &endpointGroup{roles: []string{role}, uses: []RoleUse{use}, ep: ep}
		order = append(order, key)
	}
	if len(order) == 0 {
		if firstErr == nil {
			firstErr = fmt.Errorf("every role asked about uses rules, no model: %s", strings.Join(roles, ", "))
		}
		return nil, nil, nil, firstErr
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].Role < uses[j].Role })
	return groups, order, uses, nil
}

func pingEndpoint(ctx context.Context, cfg *llm.Config, g *endpointGroup, withImage bool) ModelTestResult {
	sort.Strings(g.roles)
	sort.Slice(g.uses, func(i, j int) bool { return g.uses[i].Role < g.uses[j].Role })
	r := ModelTestResult{Roles: g.roles, Uses: g.uses, Provider: g.ep.Provider, Model: g.ep.Model, BaseURL: g.ep.BaseURL}
	c, err := cfg.Client(g.roles[0])
	if err == nil {
		start := time.Now()
		var resp *llm.Response
		msgs := []llm.Message{llm.System("This is a connectivity check. Reply with the single word pong."), llm.User("ping")}
		if withImage {
			msgs = []llm.Message{llm.System("This is a connectivity check. Answer with one word."), llm.User("What colour is this image?", redPNG())}
		}
		resp, err = c.Complete(ctx, &llm.Request{Role: g.roles[0], MaxTokens: 16, Messages: msgs})
		r.LatencyMS = time.Since(start).Milliseconds()
		if err == nil {
			r.OK, r.Answer = true, strings.TrimSpace(resp.Text)
			r.PromptTokens, r.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
			if resp.Model != "" {
				r.Model = resp.Model
			}
		}
	}
	if err != nil {
		r.Error = err.Error()
		var ae *llm.APIError
		if errors.As(err, &ae) && ae.Status == 404 {
			r.Error += " (check the base URL and the model name)"
		}
	}
	return r
}

func printModelTest(env *Env, uses []RoleUse, results []ModelTestResult) error {
	if env.JSON {
		return env.PrintJSON(results)
	}
	tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tTIER\tMODEL\tSCREENSHOTS")
	for _, u := range uses {
		tier, model, images := cmp.Or(u.Tier, "(own)"), u.Model, "no"
		if u.Images {
			images = "yes"
		}
		if u.Tier == string(llm.TierRules) {
			model, images = "none: rules", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Role, tier, model, images)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "ROLES\tPROVIDER\tMODEL\tENDPOINT\tLATENCY\tTOKENS\tRESULT")
	for _, r := range results {
		result := "ok: " + quoteShort(r.Answer)
		tokens := fmt.Sprintf("%d+%d", r.PromptTokens, r.CompletionTokens)
		latency := fmt.Sprintf("%dms", r.LatencyMS)
		if !r.OK {
			result, tokens = "FAILED: "+r.Error, "-"
		}
		roles := strings.Join(r.Roles, ",")
		if len(results) == 1 && len(r.Roles) > 2 {
			roles = "all" // every role uses one endpoint
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", roles, r.Provider, r.Model, r.BaseURL, latency, tokens, result)
	}
	return tw.Flush()
}

func quoteShort(s string) string {
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// redPNG is a 32×32 red square, small enough for any vision endpoint.
func redPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{220, 20, 20, 255}}, image.Point{}, draw.Src)
	var b bytes.Buffer
	_ = png.Encode(&b, img) // cannot fail writing to memory
	return b.Bytes()
}

// loadModelConfig reads the model: section of the apex.yaml the --config
// flag names or discovery finds, and the environment (getenv; nil means
// os.Getenv).
func loadModelConfig(env *Env, flag string, getenv func(string) string) (*llm.Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	file, err := configFile(flag, getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := llm.LoadConfig(file, getenv)
	if err != nil {
		return nil, err
	}
	cfg.Log = env.Log
	return cfg, nil
}
