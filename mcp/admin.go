package mcp

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/apexagent/apex/device"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// extension returns the locked lease of dev (the caller unlocks) and its
// driver as E, the extension tool needs.
func extension[E any](s *Server, req *sdk.CallToolRequest, dev, tool string) (*lease, E, error) {
	var none E
	l, err := s.acquire(req.Session, dev)
	if err != nil {
		return nil, none, err
	}
	ext, ok := l.driver.(E)
	if !ok {
		s.release(l)
		return nil, none, fmt.Errorf("%s needs an Android device (reached over ADB); %s is %s: %w", tool, l.target.ID, l.target.Platform, device.ErrUnsupported)
	}
	return l, ext, nil
}

func (s *Server) appInstall(ctx context.Context, req *sdk.CallToolRequest, in installIn) (*sdk.CallToolResult, any, error) {
	fi, err := os.Stat(in.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("app_install: %w", err)
	}
	if fi.IsDir() {
		return nil, nil, fmt.Errorf("app_install: %s is a directory: give the APK file", in.Path)
	}
	l, inst, err := extension[device.Installer](s, req, in.Device, "app_install")
	if err != nil {
		return nil, nil, err
	}
	defer s.release(l)
	if err := inst.Install(ctx, in.Path); err != nil {
		return nil, nil, fmt.Errorf("app_install on %s: %w", l.target.ID, err)
	}
	return text(fmt.Sprintf("installed %s on %s\n", in.Path, l.target.ID)), nil, nil
}

func (s *Server) shell(ctx context.Context, req *sdk.CallToolRequest, in shellIn) (*sdk.CallToolResult, any, error) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, nil, fmt.Errorf("shell: command is required")
	}
	l, sh, err := extension[device.Sheller](s, req, in.Device, "shell")
	if err != nil {
		return nil, nil, err
	}
	defer s.release(l)
	out, err := sh.Shell(ctx, in.Command)
	if err != nil {
		return nil, nil, fmt.Errorf("shell on %s: %w", l.target.ID, err)
	}
	if len(out) > maxShellOutput {
		out = out[:maxShellOutput] + fmt.Sprintf("\n… (%d more bytes cut)\n", len(out)-maxShellOutput)
	}
	return text(out), nil, nil
}
