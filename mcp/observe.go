package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/lazy"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type observeIn struct {
	Device     string `json:"device" jsonschema:"the device id from device_open"`
	Budget     int    `json:"budget,omitempty" jsonschema:"the most bytes of scene text to return (default 5000); less important elements are dropped first"`
	Screenshot bool   `json:"screenshot,omitempty" jsonschema:"also return a screenshot"`
	MaxSize    int    `json:"maxSize,omitempty" jsonschema:"with screenshot: its longest side in pixels (default 1024)"`
}

// maxBudget bounds the scene budget a caller may ask for.
const maxBudget = 1 << 20

func (s *Server) addObserveTools() {
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(s.srv, &sdk.Tool{Name: "observe", Annotations: ro,
		Description: "Read the screen of an open device as a Scene: one line per element with its id (e1, e2, …), type, text, and the point a tap lands on. Ids stay valid until the screen changes; action tools accept them. Optionally adds a screenshot."},
		s.observe)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "scene_diff", Annotations: ro,
		Description: "Observe again and say what changed since the last observation: elements that appeared, disappeared or changed state. The new observation becomes the last one (ids refer to it)."},
		s.sceneDiff)
}

func (s *Server) observe(ctx context.Context, req *sdk.CallToolRequest, in observeIn) (*sdk.CallToolResult, any, error) {
	if in.Budget < 0 || in.Budget > maxBudget {
		return nil, nil, fmt.Errorf("budget %d: give a number of bytes up to %d, or leave it out for %d", in.Budget, maxBudget, scene.DefaultBudget)
	}
	if err := checkMaxSize(in.MaxSize); err != nil {
		return nil, nil, err
	}
	l, err := s.acquire(req.Session, in.Device)
	if err != nil {
		return nil, nil, err
	}
	defer s.release(l)
	sc, err := observeScene(ctx, l, in.Budget)
	if err != nil {
		return nil, nil, err
	}
	l.scene = sc
	res := text(sc.Text())
	if in.Screenshot {
		img, err := screenshot(ctx, l.driver, in.MaxSize)
		if err != nil {
			return nil, nil, err
		}
		res.Content = append(res.Content, &sdk.ImageContent{Data: img.png, MIMEType: "image/png"}, &sdk.TextContent{Text: img.caption(l.target.ID)})
	}
	return res, nil, nil
}

func (s *Server) sceneDiff(ctx context.Context, req *sdk.CallToolRequest, in deviceIn) (*sdk.CallToolResult, any, error) {
	l, err := s.acquire(req.Session, in.Device)
	if err != nil {
		return nil, nil, err
	}
	defer s.release(l)
	if l.scene == nil {
		return nil, nil, fmt.Errorf("no observation of %s yet: call observe first", l.target.ID)
	}
	sc, err := observeScene(ctx, l, l.scene.Budget)
	if err != nil {
		return nil, nil, err
	}
	d := scene.Diff(l.scene, sc)
	l.scene = sc
	return text(diffText(d, sc)), nil, nil
}

// observeScene reads the leased device's screen into a Scene within
// budget bytes (0: the default): the UI tree, with OCR of the screenshot
// fused in where the tree cannot be trusted. The next action starts from
// this screen while the device still shows it. Callers hold l.mu.
func observeScene(ctx context.Context, l *lease, budget int) (*scene.Scene, error) {
	s, err := l.sess.Look(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the screen: %w", err)
	}
	sc := *s.Scene
	sc.Budget = budget
	if budget <= 0 {
		sc.Budget = scene.DefaultBudget
	}
	return &sc, nil
}

// diffText renders a Delta for a model, with the new elements' ids.
func diffText(d scene.Delta, now *scene.Scene) string {
	if d.Empty() {
		return "no change since the last observation\n"
	}
	var b strings.Builder
	if app := now.Package; app != "" {
		fmt.Fprintf(&b, "app=%s\n", app)
	}
	for _, e := range d.Appeared {
		fmt.Fprintf(&b, "+ %s\n", e.Line())
	}
	for _, e := range d.Disappeared {
		fmt.Fprintf(&b, "- %s\n", strings.TrimPrefix(e.Line(), e.ID+" "))
	}
	for _, c := range d.Changed {
		fmt.Fprintf(&b, "~ %s (%s; was %s)\n", c.After.Line(), strings.Join(c.Fields, ", "), strings.TrimPrefix(c.Before.Line(), c.Before.ID+" "))
	}
	b.WriteString("ids now refer to this observation\n")
	return b.String()
}

var sceneID = lazy.Regexp(`^e[0-9]+$`)

// refersToObservation reports the scene id a locator names, if any: "e7"
// as the whole prompt or as its id.
func refersToObservation(loc action.Locator) (string, bool) {
	if sceneID().MatchString(loc.ID) {
		return loc.ID, true
	}
	if p := strings.TrimSpace(loc.Prompt); sceneID().MatchString(p) && loc.ID == "" {
		return p, true
	}
	return "", false
}

// pinObserved makes the locators of c that name an element of the last
// observation (e7) point at that element, provided the screen still shows
// it where it was (other changes, like text typed elsewhere, do not
// matter): ids refer to the observation the model read, not to the screen
// the step will observe. Text and descriptions are found on the screen
// now. It returns how each locator was written, for the answer.
func pinObserved(ctx context.Context, l *lease, c action.Call) (map[string]string, error) {
	written := map[string]string{}
	var fresh *scene.Scene
	for _, ref := range c.Locators() {
		if ref.Locator == nil {
			continue
		}
		written[ref.Name] = ref.Locator.String()
		id, ok := refersToObservation(*ref.Locator)
		if !ok {
			continue
		}
		last := l.scene
		if last == nil {
			return nil, fmt.Errorf("%s is an element id, but %s has not been observed yet: call observe and use an id from it: %w", id, l.target.ID, action.ErrNotFound)
		}
		e, err := locate.Find(last, *ref.Locator)
		if err != nil {
			return nil, err
		}
		if fresh == nil {
			sc, err := l.sess.Look(ctx)
			if err != nil {
				return nil, fmt.Errorf("read the screen: %w", err)
			}
			fresh = sc.Scene
		}
		if !onScreen(fresh, e) {
			return nil, fmt.Errorf("%s of the last observation is no longer on screen (the screen changed): call observe (or scene_diff) and use a current id: %w", id, action.ErrNotFound)
		}
		x, y := e.Bounds.Center()
		pinned := action.Locator{Point: &device.Point{X: x, Y: y}}
		if err := c.SetLocator(ref.Name, pinned); err != nil {
			return nil, err
		}
	}
	return written, nil
}

// onScreen reports whether s shows e: an element of the same kind, text
// and place.
func onScreen(s *scene.Scene, e scene.Element) bool {
	for _, f := range s.Elements {
		if f.Type == e.Type && f.Text == e.Text && f.Desc == e.Desc && f.ResourceID == e.ResourceID && f.Bounds == e.Bounds {
			return true
		}
	}
	return false
}

func targetText(written string, t action.Target) string {
	if t.Element != nil {
		return fmt.Sprintf("%s → %s at (%d, %d)", written, t.Element.Line(), t.Point.X, t.Point.Y)
	}
	return fmt.Sprintf("%s → (%d, %d)", written, t.Point.X, t.Point.Y)
}
