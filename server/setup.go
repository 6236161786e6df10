package server

import (
	"cmp"
	"fmt"
	"net/http"

	"github.com/apexagent/apex/device"
)

// Setup is the form a client shows to open a session (GET /session/setup).
type Setup struct {
	Session SessionView  `json:"session"`
	Fields  []SetupField `json:"fields"`
	// Submit is where the filled form goes, as a JSON object of the fields.
	Submit struct {
		Method string `json:"method"`
		Path   string `json:"path"`
	} `json:"submit"`
	// AutoSubmit is set when no session exists and exactly one device is
	// online: the client may open it without asking.
	AutoSubmit bool `json:"autoSubmit"`
	// Warnings say why the list may be incomplete (discovery failed).
	Warnings []string `json:"warnings"`
	// Blocked says why no session can be set up on this machine, and
	// what to do; the form cannot be submitted until it is fixed.
	Blocked string `json:"blocked,omitempty"`
	// Boot are the platforms POST /devices/boot starts a simulated phone
	// of (none: the playground boots none).
	Boot []device.Platform `json:"boot"`
	// Title, PrimaryActionLabel and Targets are for Midscene's form.
	Title              string          `json:"title"`
	PrimaryActionLabel string          `json:"primaryActionLabel"`
	Targets            []SessionTarget `json:"targets"`
}

// SetupField is one field of the setup form.
type SetupField struct {
	Name     string `json:"name"`
	Key      string `json:"key"` // Name, as Midscene's form reads it
	Label    string `json:"label"`
	Type     string `json:"type"` // select
	Required bool   `json:"required"`
	Default  string `json:"default,omitempty"`
	// DefaultValue is Default, as Midscene's form reads it.
	DefaultValue string        `json:"defaultValue,omitempty"`
	Options      []SetupOption `json:"options"`
}

// SetupOption is one choice of a select field.
type SetupOption struct {
	Value    string `json:"value"`
	Label    string `json:"label"`
	Disabled bool   `json:"disabled,omitempty"`
	Hint     string `json:"hint,omitempty"` // what to do to make it usable
	// Booted is set on a phone this playground booted, which DELETE
	// /devices/{id} shuts down.
	Booted bool `json:"booted,omitempty"`
}

func (s *Server) setup(w http.ResponseWriter, r *http.Request) {
	var blocked string
	if err := s.checkBlocked(r.Context()); err != nil {
		blocked = err.Error()
	}
	out := Setup{Session: s.sess.view(), Warnings: []string{}, Blocked: blocked, Title: "Open a device", PrimaryActionLabel: "Connect",
		Targets: []SessionTarget{}, Boot: []device.Platform{}}
	if s.opts.Booter != nil {
		out.Boot = s.opts.Booter.Platforms()
	}
	out.Submit.Method, out.Submit.Path = http.MethodPost, "/session"
	var ts []device.Target
	if s.opts.Targets != nil {
		var err error
		if ts, err = s.opts.Targets(r.Context()); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("listing devices failed: %v", err))
		}
	}
	field := SetupField{Name: "deviceId", Key: "deviceId", Label: "Device", Type: "select", Required: true, Options: []SetupOption{}}
	var online []string
	for _, t := range ts {
		out.Targets = append(out.Targets, SessionTarget{Target: t, Label: describeTarget(t), Description: t.Hint, Status: t.State})
		o := SetupOption{Value: t.ID, Label: cmp.Or(t.Model, t.Serial, t.ID), Disabled: !t.Ready(), Hint: t.Hint, Booted: s.booted.has(t.ID)}
		if o.Label != t.ID {
			o.Label += " (" + t.ID + ")"
		}
		if o.Disabled {
			o.Label += " — " + t.State
		} else {
			online = append(online, t.ID)
		}
		field.Options = append(field.Options, o)
	}
	if len(online) == 1 {
		field.Default, field.DefaultValue = online[0], online[0]
		out.AutoSubmit = out.Session.State == StateRequired && blocked == ""
	}
	switch {
	case len(ts) == 0 && len(out.Warnings) == 0 && s.opts.NoTargets != "":
		out.Warnings = append(out.Warnings, s.opts.NoTargets)
	case len(ts) == 0 && len(out.Warnings) == 0:
		how := "start a simulated phone (apex sim)"
		if len(out.Boot) > 0 {
			how = "boot a simulated phone here (POST /devices/boot)"
		}
		out.Warnings = append(out.Warnings, "no device found: connect one (adb devices lists it) or "+how)
	case len(ts) > 0 && len(online) == 0:
		out.Warnings = append(out.Warnings, "no device is online: see each device's hint")
	}
	out.Fields = []SetupField{field}
	writeJSON(w, http.StatusOK, out)
}
