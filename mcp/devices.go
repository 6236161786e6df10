package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/apexagent/apex/device"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type deviceListIn struct {
	Device string `json:"device,omitempty" jsonschema:"optional: list only devices whose id contains this"`
}

type deviceIn struct {
	Device string `json:"device" jsonschema:"the device id from device_list or device_open, e.g. sim/127.0.0.1:6520"`
}

type openIn struct {
	Device string `json:"device" jsonschema:"the device id from device_list, e.g. sim/127.0.0.1:6520, or HOST/new to boot one; \"\": the only ready device (on the device-hub profile a newly booted one when none is free)"`
}

type screenshotIn struct {
	Device  string `json:"device" jsonschema:"the device id from device_open"`
	MaxSize int    `json:"maxSize,omitempty" jsonschema:"the longest side of the image in pixels (default 1024; the screen's own size at most)"`
}

// DefaultImageSize is the long side, in pixels, screenshots are scaled to
// unless the caller asks otherwise.
const DefaultImageSize = 1024

func (s *Server) addDeviceTools() {
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(s.srv, &sdk.Tool{Name: "device_list", Annotations: ro,
		Description: "List the phones Apex can drive (real Android over adb, iPhones, simulated phones), with whether each is free, open in this session, or in use by another session."},
		s.deviceList)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "device_open",
		Description: "Open a device for this session. It stays leased to this session (other sessions are refused) until device_close, the session's end, or an idle timeout. Returns its id, screen size and the tools that drive it."},
		s.deviceOpen)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "device_close",
		Description: "Release a device this session opened, so other sessions can use it."},
		s.deviceClose)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "device_screenshot", Annotations: ro,
		Description: fmt.Sprintf("Take a screenshot of an open device, as a PNG image scaled so its longest side is maxSize pixels (default %d).", DefaultImageSize)},
		s.deviceScreenshot)
}

func (s *Server) deviceList(ctx context.Context, req *sdk.CallToolRequest, in deviceListIn) (*sdk.CallToolResult, any, error) {
	ts, err := s.reg.Targets(ctx)
	if err != nil && len(ts) == 0 {
		return nil, nil, fmt.Errorf("listing devices: %w", err)
	}
	owners := s.leaseOwners()
	var b strings.Builder
	n := 0
	for _, t := range ts {
		if in.Device != "" && !strings.Contains(t.ID, in.Device) {
			continue
		}
		n++
		status := "free"
		if o, ok := owners[t.ID]; ok {
			status = "in use by another session"
			if o == req.Session {
				status = "open in this session"
			}
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s", t.ID, t.Platform, t.Model, status)
		if t.Width > 0 {
			fmt.Fprintf(&b, "\t%dx%d", t.Width, t.Height)
		}
		if !t.Ready() {
			fmt.Fprintf(&b, "\t%s: %s", t.State, t.Hint)
		}
		b.WriteByte('\n')
	}
	for _, h := range s.opts.Hosts {
		if _, ok := h.(device.Booter); ok {
			fmt.Fprintf(&b, "%s/new\t-\tboots a new device\tfree\tdevice_open it to start one\n", h.Name())
			n++
		}
	}
	if n == 0 {
		b.WriteString("no devices: attach an Android device with USB debugging on, or start Apex with --sim for a simulated phone\n")
	}
	if err != nil {
		fmt.Fprintf(&b, "(some hosts failed: %v)\n", err)
	}
	return text(b.String()), nil, nil
}

func (s *Server) deviceOpen(ctx context.Context, req *sdk.CallToolRequest, in openIn) (*sdk.CallToolResult, any, error) {
	if id, booted, err := s.bootIfAsked(ctx, in.Device); err != nil {
		return nil, nil, err
	} else if booted {
		in.Device = id
	}
	l, fresh, err := s.open(ctx, req.Session, in.Device)
	if err != nil && in.Device == "" && s.opts.Profile == DeviceHub && noneFree(err) {
		// No device named and none free: the device hub boots one where
		// a host can (its caps apply).
		if id, booted, berr := s.bootIfAsked(ctx, "*/new"); berr != nil {
			return nil, nil, fmt.Errorf("%w; and booting one failed: %w", err, berr)
		} else if booted {
			l, fresh, err = s.open(ctx, req.Session, id)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if s.opts.Profile == DeviceHub {
		return s.hubOpened(l, fresh)
	}
	t := l.target
	var b strings.Builder
	if fresh {
		fmt.Fprintf(&b, "opened %s", t.ID)
	} else {
		fmt.Fprintf(&b, "%s is already open in this session", t.ID)
	}
	fmt.Fprintf(&b, " (%s %s", t.Platform, t.Model)
	if t.Width > 0 {
		fmt.Fprintf(&b, ", %dx%d", t.Width, t.Height)
	}
	fmt.Fprintf(&b, ").\nPass device=%q to every tool. Start with observe to see the screen as elements (e1, e2, …).\n", t.ID)
	if s.opts.Policy.allows(Standard) {
		names := s.toolNames(l.space)
		fmt.Fprintf(&b, "Actions on this %s device: %s.\n", t.Platform, strings.Join(names, ", "))
	} else {
		fmt.Fprintf(&b, "Policy %s: this server only observes.\n", s.opts.Policy)
	}
	return text(b.String()), nil, nil
}

func (s *Server) deviceClose(ctx context.Context, req *sdk.CallToolRequest, in deviceIn) (*sdk.CallToolResult, any, error) {
	l, err := s.closeLease(req.Session, in.Device)
	if err != nil {
		return nil, nil, err
	}
	msg := "closed " + l.target.ID
	if l.agent != nil && len(l.agent.exited) > 0 {
		msg += ", exited " + strings.Join(l.agent.exited, ", ")
	}
	return text(msg + "; other sessions may open it now\n"), nil, nil
}

func (s *Server) deviceScreenshot(ctx context.Context, req *sdk.CallToolRequest, in screenshotIn) (*sdk.CallToolResult, any, error) {
	if err := checkMaxSize(in.MaxSize); err != nil {
		return nil, nil, err
	}
	l, err := s.acquire(req.Session, in.Device)
	if err != nil {
		return nil, nil, err
	}
	defer s.release(l)
	img, err := screenshot(ctx, l.driver, in.MaxSize)
	if err != nil {
		return nil, nil, err
	}
	return &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.ImageContent{Data: img.png, MIMEType: "image/png"},
		&sdk.TextContent{Text: img.caption(l.target.ID)},
	}}, nil, nil
}

// text is a tool result of one text block.
func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}
