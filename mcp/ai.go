package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/store"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Outcome is how an act ended, as the act tool answers it.
type Outcome struct {
	Status  string   `json:"status"` // done, failed, review_required, canceled
	Summary string   `json:"summary"`
	Reason  string   `json:"reason,omitempty"` // why it did not finish
	Steps   int      `json:"steps"`
	Log     []string `json:"log,omitempty"` // one line per step
	// RunID is the run recorded for the task (apex report RUN-ID) and
	// Report its HTML report, when the server records runs.
	RunID  string `json:"run_id,omitempty"`
	Report string `json:"report,omitempty"`
}

func outcome(r *agent.Result) *Outcome {
	out := &Outcome{Status: r.Status, Summary: r.Summary, Reason: r.Reason, Steps: len(r.Steps)}
	for _, s := range r.Steps {
		out.Log = append(out.Log, fmt.Sprintf("%d. %s: %s (%s)", s.ID, s.Step, s.Status, s.Summary))
	}
	return out
}

// ErrNoAI is what the AI tools return when the server has no AI runtime.
var ErrNoAI = errors.New("this server has no AI runtime: act, assert and query need one (mcp.Options.AI, e.g. mcp.Agent); use observe and the action tools meanwhile")

type aiIn struct {
	Device string `json:"device" jsonschema:"the device id from device_open"`
	Goal   string `json:"goal" jsonschema:"what to do, in plain words, e.g. add the first result to the cart"`
}

type assertIn struct {
	Device    string `json:"device" jsonschema:"the device id from device_open"`
	Assertion string `json:"assertion" jsonschema:"what should be true on screen now, e.g. the cart shows 2 items"`
}

type queryIn struct {
	Device   string `json:"device" jsonschema:"the device id from device_open"`
	Question string `json:"question" jsonschema:"what to read from the screen, e.g. the price of the first item"`
	Kind     string `json:"kind,omitempty" jsonschema:"the answer's type: string (default), number or boolean" enum:"string,number,boolean"`
}

func (s *Server) addAITools() {
	sdk.AddTool(s.srv, &sdk.Tool{Name: "act",
		Description: "Carry out a goal on the device in plain words (several steps: observe, tap, type, scroll, …), answered by Apex's AI runtime or, with no model configured, its rule planner."},
		s.act)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "assert", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		Description: "Check that something holds on the device's screen now. Returns pass or fail, a confidence and the evidence; uncertain verdicts are flagged for review."},
		s.assert)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "query", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		Description: "Read a value from the device's screen (a price, a count, whether something is on), answered as a string, number or boolean."},
		s.query)
}

func (s *Server) aiTask(req *sdk.CallToolRequest, dev, goal, what string) (*lease, agent.Task, error) {
	if strings.TrimSpace(goal) == "" {
		return nil, agent.Task{}, fmt.Errorf("%s is required", what)
	}
	if s.opts.AI == nil {
		if _, err := s.held(req.Session, dev); err != nil {
			return nil, agent.Task{}, err
		}
		return nil, agent.Task{}, ErrNoAI
	}
	// The lease stays locked for the whole task; the caller unlocks. The
	// runtime drives the device itself: the lease's session observes
	// afresh after it.
	l, err := s.acquire(req.Session, dev)
	if err != nil {
		return nil, agent.Task{}, err
	}
	l.sess.Forget()
	return l, agent.Task{Goal: goal, Driver: l.driver, DeviceID: l.target.ID, Space: l.space}, nil
}

func (s *Server) act(ctx context.Context, req *sdk.CallToolRequest, in aiIn) (*sdk.CallToolResult, any, error) {
	l, t, err := s.aiTask(req, in.Device, in.Goal, "goal")
	if err != nil {
		return nil, nil, err
	}
	defer s.release(l)
	finish := s.record(ctx, &t, l.target.Platform)
	r, err := s.opts.AI.Act(ctx, t)
	reportPath := finish(r, err)
	if err != nil {
		return nil, nil, fmt.Errorf("act on %s: %w", t.DeviceID, err)
	}
	out := outcome(r)
	out.RunID, out.Report = t.RunID, reportPath
	res, _, err := jsonResult(out)
	// A goal that did not get done is an error the model should see as one.
	if res != nil && out.Status != "done" {
		res.IsError = true
	}
	return res, nil, err
}

func (s *Server) assert(ctx context.Context, req *sdk.CallToolRequest, in assertIn) (*sdk.CallToolResult, any, error) {
	l, t, err := s.aiTask(req, in.Device, in.Assertion, "assertion")
	if err != nil {
		return nil, nil, err
	}
	defer s.release(l)
	v, err := s.opts.AI.Assert(ctx, t)
	if err != nil {
		return nil, nil, fmt.Errorf("assert on %s: %w", t.DeviceID, err)
	}
	return jsonResult(v)
}

func (s *Server) query(ctx context.Context, req *sdk.CallToolRequest, in queryIn) (*sdk.CallToolResult, any, error) {
	l, t, err := s.aiTask(req, in.Device, in.Question, "question")
	if err != nil {
		return nil, nil, err
	}
	kind := in.Kind
	if kind == "" {
		kind = "string"
	}
	defer s.release(l)
	v, err := s.opts.AI.Query(ctx, t, kind)
	if err != nil {
		return nil, nil, fmt.Errorf("query on %s: %w", t.DeviceID, err)
	}
	return jsonResult(map[string]any{"answer": v})
}

// jsonResult returns v as indented JSON text and as structured content.
func jsonResult(v any) (*sdk.CallToolResult, any, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil, nil
}

// record makes t a recorded run of Options.Runs: its events, every step
// with its screenshots, and an HTML report written by the returned finish.
// Without Runs, or when the run cannot start, the task runs unrecorded.
func (s *Server) record(ctx context.Context, t *agent.Task, p device.Platform) (finish func(*agent.Result, error) string) {
	st := s.opts.Runs
	if st == nil {
		return func(*agent.Result, error) string { return "" }
	}
	run, err := st.StartRun(context.WithoutCancel(ctx), store.Run{Name: "mcp act: " + t.Goal, Device: t.DeviceID, Platform: string(p)})
	if err != nil {
		s.opts.Log.Warn("mcp: record the act task", "err", err)
		return func(*agent.Result, error) string { return "" }
	}
	t.Store, t.RunID, t.Steps = st, run.ID, st.StepRecorder(run.ID)
	return func(r *agent.Result, err error) string {
		ctx := context.WithoutCancel(ctx)
		status, reason := agent.RunStatus(r, err)
		if err := st.FinishRun(ctx, run.ID, status, reason); err != nil {
			s.opts.Log.Warn("mcp: finish the record", "run", run.ID, "err", err)
		}
		path, err := report.Write(ctx, st, run.ID)
		if err != nil {
			s.opts.Log.Warn("mcp: write the report", "run", run.ID, "err", err)
		}
		return path
	}
}
