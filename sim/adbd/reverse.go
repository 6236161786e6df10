package adbd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// reverse is one `adb reverse DEVICE HOST` rule: connections made on the
// device to DEVICE are forwarded to HOST on the machine of the adb server
// that set it, over that server's connection.
type reverse struct {
	c    *conn
	host string
}

// serveReverse answers the `reverse:` service as adbd does: "OKAY", the
// length-prefixed list for list-forward (the adb server sent the OKAY), or
// "FAIL" plus a length-prefixed message.
func (s *Server) serveReverse(st *stream, req string) {
	payload, err := s.reverseRequest(st.c, req)
	if err != "" {
		fmt.Fprintf(st, "FAIL%04x%s", len(err), err)
		return
	}
	if req == "list-forward" {
		fmt.Fprintf(st, "%04x%s", len(payload), payload)
		return
	}
	st.Write([]byte("OKAY"))
}

func (s *Server) reverseRequest(c *conn, req string) (payload, failure string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case req == "list-forward":
		var lines []string
		for dev, r := range s.reverses {
			if r.c == c {
				lines = append(lines, "host "+dev+" "+r.host+"\n")
			}
		}
		sort.Strings(lines)
		return strings.Join(lines, ""), ""
	case req == "killforward-all":
		for dev, r := range s.reverses {
			if r.c == c {
				delete(s.reverses, dev)
			}
		}
		return "", ""
	case strings.HasPrefix(req, "killforward:"):
		dev := strings.TrimPrefix(req, "killforward:")
		if r, ok := s.reverses[dev]; !ok || r.c != c {
			return "", fmt.Sprintf("listener '%s' not found", dev)
		}
		delete(s.reverses, dev)
		return "", ""
	case strings.HasPrefix(req, "forward:"):
		spec := strings.TrimPrefix(req, "forward:")
		norebind := false
		if rest, ok := strings.CutPrefix(spec, "norebind:"); ok {
			spec, norebind = rest, true
		}
		dev, host, ok := strings.Cut(spec, ";")
		if !ok || !validSocketSpec(dev) || !validSocketSpec(host) {
			return "", fmt.Sprintf("cannot parse reverse spec '%s' (want DEVICE;HOST, e.g. tcp:8081;tcp:8081)", spec)
		}
		if dev == "tcp:0" {
			return "", "the simulated phone cannot pick a free device port: name one (tcp:8081)"
		}
		if _, taken := s.reverses[dev]; taken && norebind {
			return "", fmt.Sprintf("cannot rebind existing socket '%s'", dev)
		}
		s.reverses[dev] = reverse{c: c, host: host}
		return "", ""
	}
	return "", fmt.Sprintf("unknown reverse request '%s'", req)
}

func validSocketSpec(s string) bool {
	kind, arg, ok := strings.Cut(s, ":")
	if !ok || arg == "" {
		return false
	}
	switch kind {
	case "tcp", "localabstract", "localreserved", "localfilesystem", "local", "jdwp":
		return true
	}
	return false
}

// DialDevice makes a connection on the device to a device-side socket
// ("tcp:8081"), as an app on the phone would. When `adb reverse` set a rule
// for it, the connection reaches the host through adb; otherwise it is
// refused as nothing listens there on the phone.
func (s *Server) DialDevice(ctx context.Context, spec string) (io.ReadWriteCloser, error) {
	s.mu.Lock()
	r, ok := s.reverses[spec]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("adbd: connect to %s on the phone: connection refused (set a rule with `adb reverse %s HOST`)", spec, spec)
	}
	return r.c.dial(ctx, r.host)
}
