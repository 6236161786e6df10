package server

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
)

// The playground speaks Midscene's playground protocol beside its own, so
// Midscene's PlaygroundSDK (remote execution), its web app and its Chrome
// extension drive Apex unchanged. Where both name the same endpoint, one
// handler takes both bodies and its answer carries both shapes; the
// endpoints only Midscene has are here. docs/playground.md maps them.
func (s *Server) midsceneAPI() []route {
	rs := []route{
		{"GET /session", s.sessionInfo},
		{"POST /action-space", s.midsceneActionSpace},
		{"POST /connectivity-test", s.connectivityTest},
	}
	rs = append(rs, s.midsceneRecorderAPI()...)
	return append(rs, s.reportsAPI()...)
}

// MidsceneSession is the session as Midscene's client reads it
// (GET /session, and "session" in POST and DELETE /session's answers).
type MidsceneSession struct {
	Connected   bool           `json:"connected"`
	DisplayName string         `json:"displayName,omitempty"`
	Metadata    map[string]any `json:"metadata"`
	// SetupState is required, ready or blocked.
	SetupState          string `json:"setupState"`
	SetupBlockingReason string `json:"setupBlockingReason,omitempty"`
}

func midsceneSession(v SessionView) MidsceneSession {
	m := MidsceneSession{Metadata: map[string]any{"state": v.State}, SetupState: "required"}
	switch v.State {
	case StateReady, StateRunning, StateRecreating:
		m.Connected, m.SetupState = true, "ready"
	case StateBlocked:
		m.SetupState, m.SetupBlockingReason = "blocked", v.Error
	}
	if v.Device != nil {
		m.DisplayName = describeTarget(*v.Device)
		m.Metadata["deviceId"] = v.Device.ID
	}
	if v.RequestID != "" {
		m.Metadata["requestId"] = v.RequestID
	}
	return m
}

// sessionInfo serves GET /session: the session in both shapes.
func (s *Server) sessionInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.sessionAnswer(s.sess.view()))
}

// sessionAnswer is v with Midscene's fields beside: the session as it
// reads it, and the runtime.
func (s *Server) sessionAnswer(v SessionView) map[string]any {
	out := map[string]any{"state": v.State, "session": midsceneSession(v), "runtimeInfo": s.runtimeView(v)}
	ms := midsceneSession(v)
	out["connected"], out["displayName"], out["metadata"], out["setupState"] = ms.Connected, ms.DisplayName, ms.Metadata, ms.SetupState
	if v.Device != nil {
		out["device"] = v.Device
	}
	if v.Error != "" {
		out["error"] = v.Error
	}
	if v.RequestID != "" {
		out["requestId"] = v.RequestID
	}
	return out
}

// runtimeView is GET /runtime-info: Apex's fields and Midscene's.
func (s *Server) runtimeView(v SessionView) map[string]any {
	var platform device.Platform
	desc := "no device session: POST /session to open one"
	if v.Device != nil {
		platform = v.Device.Platform
		desc = describeTarget(*v.Device)
	}
	ms := midsceneSession(v)
	return map[string]any{
		"id":           s.id,
		"platform":     platform,
		"previewKinds": s.previewKinds(),
		// The transport the page must use ("webrtc"), or "auto".
		"previewTransport":    cmp.Or(s.opts.PreviewTransport, "auto"),
		"session":             v,
		"platformId":          platform,
		"title":               "Apex playground",
		"platformDescription": desc,
		"interface":           map[string]any{"type": platform, "description": desc},
		"preview": map[string]any{"kind": "mjpeg", "screenshotPath": "/screenshot", "mjpegPath": "/mjpeg",
			"capabilities": []map[string]any{{"kind": "mjpeg", "label": "MJPEG streaming", "live": true},
				{"kind": "screenshot", "label": "Screenshot polling", "live": false}}},
		"executionUxHints": []string{},
		"metadata": map[string]any{"sessionConnected": ms.Connected, "sessionDisplayName": ms.DisplayName,
			"setupState": ms.SetupState},
	}
}

// screenSize is the device's screen in the pixels /interact takes, for
// GET /interface-info ({width, height, dpr}); nil when it cannot be read.
func screenSize(ctx context.Context, dev sessionDevice) map[string]any {
	w, h := dev.target.Width, dev.target.Height
	if w == 0 || h == 0 {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		info, err := dev.drv.Info(ctx)
		if err != nil {
			return nil
		}
		w, h = info.Width, info.Height
	}
	return map[string]any{"width": w, "height": h, "dpr": 1}
}

// zodField is one param as Midscene's server serialises a Zod schema
// field, which its web app builds its forms from.
type zodField struct {
	Def         zodDef `json:"_def"`
	Description string `json:"description,omitempty"`
	Shape       any    `json:"shape,omitempty"`
}

type zodDef struct {
	TypeName     string    `json:"typeName"`
	Description  string    `json:"description,omitempty"`
	InnerType    *zodField `json:"innerType,omitempty"`
	Values       []string  `json:"values,omitempty"`
	Shape        any       `json:"shape,omitempty"`
	DefaultValue any       `json:"_serializedDefaultValue,omitempty"`
}

// schemaProp is the part of a param's JSON Schema a Zod field is made of.
type schemaProp struct {
	Type        any    `json:"type"`
	Description string `json:"description"`
	Enum        []any  `json:"enum"`
	Default     any    `json:"default"`
}

// toZod is a param's JSON Schema as a serialised Zod field: a locator is
// an object with a prompt (which is how Midscene tells locators apart).
func toZod(raw json.RawMessage, required, locator bool) *zodField {
	var p schemaProp
	_ = json.Unmarshal(raw, &p)
	types := map[string]bool{}
	switch t := p.Type.(type) {
	case string:
		types[t] = true
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types[s] = true
			}
		}
	}
	f := &zodField{Def: zodDef{Description: p.Description}, Description: p.Description}
	switch {
	case locator:
		shape := map[string]*zodField{"prompt": {Def: zodDef{TypeName: "ZodString", Description: "the element, in words"}}}
		f.Def.TypeName, f.Def.Shape, f.Shape = "ZodObject", shape, shape
	case len(p.Enum) > 0:
		f.Def.TypeName = "ZodEnum"
		for _, v := range p.Enum {
			if s, ok := v.(string); ok {
				f.Def.Values = append(f.Def.Values, s)
			}
		}
	case types["integer"] || types["number"]:
		f.Def.TypeName = "ZodNumber"
	case types["boolean"]:
		f.Def.TypeName = "ZodBoolean"
	default:
		f.Def.TypeName = "ZodString"
	}
	if p.Default != nil {
		f = &zodField{Def: zodDef{TypeName: "ZodDefault", InnerType: f, DefaultValue: p.Default, Description: p.Description}, Description: p.Description}
	}
	if !required {
		f = &zodField{Def: zodDef{TypeName: "ZodOptional", InnerType: f, Description: p.Description}, Description: p.Description}
	}
	return f
}

// MidsceneAction is one action of POST /action-space.
type MidsceneAction struct {
	Name           string         `json:"name"`
	Description    string         `json:"description"`
	InterfaceAlias string         `json:"interfaceAlias,omitempty"`
	ParamSchema    map[string]any `json:"paramSchema"`
}

func midsceneActions(space *action.Space) []MidsceneAction {
	out := []MidsceneAction{}
	for _, a := range space.Actions() {
		sc := schemaOf(a)
		shape := map[string]*zodField{}
		for name, raw := range sc.Properties {
			shape[name] = toZod(raw, slices.Contains(sc.Required, name) || isRequiredLocator(raw), slices.Contains(a.LocatorFields(), name))
		}
		out = append(out, MidsceneAction{Name: a.Name(), Description: a.Description(), InterfaceAlias: midsceneAliases[a.Name()],
			ParamSchema: map[string]any{"type": "ZodObject", "shape": shape}})
	}
	return out
}

// isRequiredLocator reports whether a locator param cannot be left out
// (its schema type does not admit null).
func isRequiredLocator(raw json.RawMessage) bool {
	var p schemaProp
	_ = json.Unmarshal(raw, &p)
	ts, ok := p.Type.([]any)
	return ok && !slices.Contains(ts, any("null")) && slices.Contains(ts, any("object"))
}

// midsceneActionSpace serves POST /action-space: the session's actions as
// Midscene lists them (GET /action-space is Apex's shape).
func (s *Server) midsceneActionSpace(w http.ResponseWriter, r *http.Request) {
	dev, err := s.sess.open(false)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, midsceneActions(dev.space))
}

// wantsJSONScreenshot reports whether GET /screenshot is asked for JSON
// ({screenshot: data URL, timestamp}, Midscene's): an Accept header that
// names no image type (fetch sends */*); a browser's <img> names them and
// a bare client sends none, and both get the PNG.
func wantsJSONScreenshot(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return a != "" && !strings.Contains(a, "image/")
}
