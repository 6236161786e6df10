// Package httpguard is what every HTTP face of Apex (the playground, MCP
// over HTTP, the simulated phone's WebDriverAgent) does before a handler
// runs: refuse foreign host names and cross-origin writes (DNS rebinding,
// a web page driving the phone through the user's browser), bound how
// long a client may take to send a request and to read an answer, cap
// header sizes, and cap the connections one address keeps open before it
// has shown it is authorised.
package httpguard

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Loopback reports whether hostport (a host name or address, with or
// without a port) names this machine's loopback interface.
func Loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// AddressHost reports whether hostport names its server by IP address
// (or loopback name), never a DNS name: a rebinding attack needs a name it
// controls, so a server reachable by address may answer any address.
func AddressHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return net.ParseIP(strings.Trim(host, "[]")) != nil || Loopback(hostport)
}

// SameOrigin reports whether origin (an Origin header) is host's own page.
func SameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == host
}

// HostError is a request refused for its Host or Origin header; Error
// says what to do.
type HostError struct{ msg string }

func (e *HostError) Error() string { return e.msg }

// CheckRequest refuses a request a page elsewhere could make: with
// anyHost false, a Host that is not a loopback name (a name an attacker
// rebound to 127.0.0.1 arrives as its own name); and always, a request
// that changes state (not GET, HEAD or OPTIONS) with an Origin other than
// the Host's own. Servers that demand a token pass anyHost true. face
// names the server in the messages ("the playground"), other says how to
// serve other names ("start it with --host and a token").
func CheckRequest(r *http.Request, anyHost bool, face, other string) error {
	if !anyHost && !Loopback(r.Host) {
		return &HostError{fmt.Sprintf("host %q refused: %s answers on 127.0.0.1 or localhost only (%s to serve other names)", r.Host, face, other)}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
		if o := r.Header.Get("Origin"); o != "" && !SameOrigin(o, r.Host) {
			return &HostError{fmt.Sprintf("cross-origin request from %s refused: %s takes requests from its own pages and from clients that send no Origin", o, face)}
		}
	}
	return nil
}
