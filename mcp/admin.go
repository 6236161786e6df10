package mcp

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// adbDriver is a driver that reaches its device over ADB (Android devices
// and simulated phones), which app_install and shell need.
type adbDriver interface {
	Transport() adb.Transport
}

type installIn struct {
	Device string `json:"device" jsonschema:"the device id from device_open"`
	Path   string `json:"path" jsonschema:"the APK file, as a path on the machine Apex runs on"`
}

type shellIn struct {
	Device  string `json:"device" jsonschema:"the device id from device_open"`
	Command string `json:"command" jsonschema:"the shell command line to run on the device, e.g. pm list packages"`
}

// maxShellOutput bounds the shell output returned to a model.
const maxShellOutput = 64 << 10

func (s *Server) addAdminTools() {
	sdk.AddTool(s.srv, &sdk.Tool{Name: "app_install",
		Description: "Install an Android app (APK file on the machine Apex runs on) on the device. Only with policy full."},
		s.appInstall)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "shell",
		Description: "Run a shell command on an Android device and return its output. Only with policy full."},
		s.shell)
}

// transport returns the locked lease of an ADB device (the caller unlocks)
// and its transport.
func (s *Server) transport(req *sdk.CallToolRequest, dev, tool string) (*lease, adb.Transport, error) {
	l, err := s.acquire(req.Session, dev)
	if err != nil {
		return nil, nil, err
	}
	ad, ok := l.driver.(adbDriver)
	if !ok || l.target.Platform != device.Android {
		s.release(l)
		return nil, nil, fmt.Errorf("%s needs an Android device reached over ADB; %s is %s: %w", tool, l.target.ID, l.target.Platform, device.ErrUnsupported)
	}
	return l, ad.Transport(), nil
}

func (s *Server) appInstall(ctx context.Context, req *sdk.CallToolRequest, in installIn) (*sdk.CallToolResult, any, error) {
	fi, err := os.Stat(in.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("app_install: %w", err)
	}
	if fi.IsDir() {
		return nil, nil, fmt.Errorf("app_install: %s is a directory: give the APK file", in.Path)
	}
	l, t, err := s.transport(req, in.Device, "app_install")
	if err != nil {
		return nil, nil, err
	}
	defer s.release(l)
	remote := "/data/local/tmp/apex-" + strings.ReplaceAll(path.Base(strings.ReplaceAll(in.Path, `\`, "/")), " ", "_")
	if err := adb.PushFile(ctx, t, in.Path, remote); err != nil {
		return nil, nil, fmt.Errorf("app_install: copy %s to %s: %w", in.Path, l.target.ID, err)
	}
	out, err := adb.Shell(ctx, t, "pm install -r "+remote)
	adb.Shell(context.WithoutCancel(ctx), t, "rm -f "+remote)
	if err != nil {
		return nil, nil, fmt.Errorf("app_install on %s: %w", l.target.ID, err)
	}
	if msg := strings.TrimSpace(string(out)); !strings.Contains(msg, "Success") {
		return nil, nil, fmt.Errorf("app_install on %s: pm install said: %s", l.target.ID, msg)
	}
	return text(fmt.Sprintf("installed %s on %s\n", in.Path, l.target.ID)), nil, nil
}

func (s *Server) shell(ctx context.Context, req *sdk.CallToolRequest, in shellIn) (*sdk.CallToolResult, any, error) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, nil, fmt.Errorf("shell: command is required")
	}
	l, t, err := s.transport(req, in.Device, "shell")
	if err != nil {
		return nil, nil, err
	}
	defer s.release(l)
	out, err := adb.Shell(ctx, t, in.Command)
	if err != nil {
		return nil, nil, fmt.Errorf("shell on %s: %w", l.target.ID, err)
	}
	if len(out) > maxShellOutput {
		out = append(out[:maxShellOutput:maxShellOutput], fmt.Sprintf("\n… (%d more bytes cut)\n", len(out)-maxShellOutput)...)
	}
	return text(string(out)), nil, nil
}
