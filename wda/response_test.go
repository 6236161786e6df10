package wda

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorSamples maps error JSON recorded from WebDriverAgent builds
// (W3C builds 4–9, and JSON Wire builds before them) to typed errors.
func TestErrorSamples(t *testing.T) {
	want := map[string]struct {
		http int
		is   error
	}{
		"w3c-v4-no-such-element.json":          {404, ErrNoSuchElement},
		"w3c-v4-invalid-session.json":          {404, ErrInvalidSession},
		"w3c-v5-no-alert.json":                 {404, ErrNoAlert},
		"w3c-v5-stale-element.json":            {404, ErrStaleElement},
		"w3c-v7-unknown-command.json":          {404, ErrUnknownCommand},
		"w3c-v7-invalid-argument.json":         {400, ErrInvalidArgument},
		"w3c-v7-app-not-installed.json":        {500, ErrAppNotInstalled},
		"w3c-v8-invalid-selector.json":         {400, ErrInvalidSelector},
		"w3c-v8-alert-open.json":               {500, ErrAlertOpen},
		"w3c-v8-session-not-created.json":      {500, ErrSessionNotCreated},
		"w3c-v9-element-not-interactable.json": {400, ErrNotInteractable},
		"w3c-v9-timeout.json":                  {500, ErrTimeout},
		"jsonwp-v1-no-such-element.json":       {200, ErrNoSuchElement},
		"jsonwp-v1-invalid-session.json":       {200, ErrInvalidSession},
		"jsonwp-v1-no-alert.json":              {200, ErrNoAlert},
		"jsonwp-v1-unhandled-endpoint.json":    {200, ErrUnknownCommand},
		"jsonwp-v1-unknown-error.json":         {200, ErrUnknown},
	}
	files, _ := filepath.Glob("testdata/errors/*.json")
	if len(files) != len(want) {
		t.Fatalf("%d samples in testdata/errors, %d in the table", len(files), len(want))
	}
	all := []error{ErrNoSuchElement, ErrInvalidSession, ErrNoAlert, ErrStaleElement, ErrUnknownCommand, ErrInvalidArgument,
		ErrInvalidSelector, ErrAlertOpen, ErrSessionNotCreated, ErrNotInteractable, ErrTimeout, ErrUnknown}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeResponse("POST /x", w.http, data)
			if !errors.Is(err, w.is) {
				t.Fatalf("DecodeResponse = %v; want %v", err, w.is)
			}
			var we *Error
			if !errors.As(err, &we) || we.Message == "" {
				t.Fatalf("error %v: want an *Error with the message", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error text spans lines: %q", err)
			}
			for _, other := range all {
				if other != w.is && errors.Is(err, other) && w.is != ErrAppNotInstalled {
					t.Errorf("%v also matches %v", err, other)
				}
			}
		})
	}
}

func TestDecodeBodies(t *testing.T) {
	tests := []struct {
		name, body string
		http       int
		value      string
		err        error
	}{
		{"w3c value", `{"value":{"width":390,"height":844},"sessionId":"S"}`, 200, `{"width":390,"height":844}`, nil},
		{"null value", `{"value":null,"sessionId":null}`, 200, "null", nil},
		{"legacy ok", `{"value":true,"sessionId":"S","status":0}`, 200, "true", nil},
		{"html page", `<html><body>502 Bad Gateway</body></html>`, 502, "", ErrBadResponse},
		{"empty body", ``, 200, "", ErrBadResponse},
		{"json without value", `{"hello":"world"}`, 200, "", ErrBadResponse},
		{"bare 404", `{"value":"not here"}`, 404, "", ErrUnknownCommand},
		{"bare 405", `{"value":""}`, 405, "", ErrUnknownMethod},
		{"unknown legacy status", `{"value":"x","status":99}`, 200, "", ErrUnknown},
		{"unknown w3c code", `{"value":{"error":"something new","message":"m"}}`, 500, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeResponse("GET /x", tt.http, []byte(tt.body))
			switch {
			case tt.name == "unknown w3c code":
				var we *Error
				if !errors.As(err, &we) || we.Code != "something new" {
					t.Fatalf("err = %v; want an *Error with the code", err)
				}
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v; want %v", err, tt.err)
				}
			default:
				if err != nil || string(r.Value) != tt.value {
					t.Fatalf("= %s, %v; want %s", r.Value, err, tt.value)
				}
			}
		})
	}
}

func FuzzDecodeResponse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(200, data)
		f.Add(404, data)
	}
	f.Add(500, []byte(`{"value":{"error":1}}`))
	f.Add(200, []byte(`{"status":"7"}`))
	f.Fuzz(func(t *testing.T, status int, data []byte) {
		r, err := DecodeResponse("GET /fuzz", status, data)
		if err == nil && r == nil {
			t.Fatal("nil response without an error")
		}
		if err == nil {
			// The JSON source parser reads the same outside input.
			if n, terr := ParseTree(r.Value); terr == nil && n == nil {
				t.Fatal("nil tree without an error")
			}
		}
		if err != nil && r != nil {
			t.Fatal("a response and an error")
		}
		if err != nil {
			var we *Error
			if !errors.As(err, &we) && !errors.Is(err, ErrBadResponse) {
				t.Fatalf("untyped error %v", err)
			}
			_ = err.Error()
		}
	})
}
