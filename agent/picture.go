package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // screenshots may be JPEG
	_ "image/png"
	"strings"

	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/internal/lazy"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/scene"
)

// Roles whose model reads images (llm.SeesImages: the validator and the
// observer at the vision tier) get the screenshot next to the Scene text:
// the whole screen, or the region an assertion names. They judge what the
// picture shows, never by comparing pixels. Text-only models get the Scene
// text alone.

// region is the part of the screen an assertion is about.
type region struct {
	name string     // as the assertion says it: "header", "Cart"
	rect scene.Rect // in the Scene's coordinates
}

var (
	// regionPart names a part of the screen: "in the header: …",
	// "in the dialog, …".
	regionPart = lazy.Regexp(`(?i)^in (?:the )?(top|bottom|left|right|center|centre|header|footer|dialog)\b\s*[,:]?\s*(.+)$`)
	// regionElement names an element: `in "Cart": …`, 在“购物车”中：…
	regionElement = lazy.Regexp(`^(?:(?i:in)\s+["“'‘]([^"”'’]+)["”'’]|在[“"]([^”"]+)[”"](?:中|里)?)\s*[,:，：]?\s*(.+)$`)
)

// regionOf finds the region an assertion names on sc ("in the header:
// …", `in "Cart": …`), or nil when it names none the screen has: the
// picture a model gets is then the whole screen.
func regionOf(assertion string, sc *scene.Scene) *region {
	a := strings.TrimSpace(assertion)
	name := ""
	if m := regionPart().FindStringSubmatch(a); m != nil {
		name = m[1]
	} else if m := regionElement().FindStringSubmatch(a); m != nil {
		name = m[1] + m[2]
	}
	if name == "" || sc == nil {
		return nil
	}
	r, ok := check.RegionRect(sc, name)
	if !ok || r.Empty() {
		return nil
	}
	return &region{name: name, rect: r}
}

// show attaches to req's last user message the picture of the screen sc
// was read from (the crop of reg, when set) if the role's model reads
// images, and says so in the message. It leaves req as it is for a
// text-only model, and when no picture can be had: sc is no longer the
// screen observed last, or the screenshot fails (logged): the Scene text
// alone then decides, as for a text-only model.
func (m *roleModel) show(ctx context.Context, req *llm.Request, sc *scene.Scene, reg *region) *llm.Request {
	if m == nil || !m.sees || m.obs == nil {
		return req
	}
	var r scene.Rect
	what := "the whole screen"
	if reg != nil {
		r, what = reg.rect, fmt.Sprintf("only the %s part of the screen", reg.name)
	}
	pic, err := m.obs.picture(ctx, sc, r)
	if err != nil {
		m.bus.log.Warn("agent: the model gets no picture", "role", m.role, "task", m.bus.taskID, "err", err)
		return req
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if msg := &req.Messages[i]; msg.Role == llm.RoleUser {
			msg.Text += "\nPicture: the attached screenshot shows " + what + "."
			msg.Images = append(msg.Images, pic)
			break
		}
	}
	return req
}

// errGone: the Scene is not of the last observation, whose screenshot
// would show another screen.
var errGone = errors.New("the Scene is not of the screen observed last")

// picture is the screenshot of the observation sc came from, cropped to r
// (in the Scene's coordinates) unless r is empty, as llm.Picture prepares
// it for a model.
func (o *observer) picture(ctx context.Context, sc *scene.Scene, r scene.Rect) ([]byte, error) {
	last := o.screen(sc)
	if last == nil {
		return nil, errGone
	}
	if err := o.s.Perceiver().Shoot(ctx, last); err != nil {
		return nil, err
	}
	img, _, err := image.Decode(bytes.NewReader(last.PNG))
	if err != nil {
		return nil, fmt.Errorf("decode the screenshot: %w", err)
	}
	if !r.Empty() {
		b := img.Bounds()
		px := sc.ToPixels(r, b.Dx(), b.Dy()).Add(b.Min).Intersect(b)
		sub, ok := img.(interface {
			SubImage(image.Rectangle) image.Image
		})
		if !ok || px.Empty() {
			return nil, fmt.Errorf("crop %v of a %T screenshot", px, img)
		}
		img = sub.SubImage(px)
	}
	return llm.Picture(img)
}
