package httpguard

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
)

// TLS is a server's certificate and key files (PEM), as --tls-cert and
// --tls-key give them; both empty serve plain HTTP.
type TLS struct {
	CertFile, KeyFile string
}

// On reports whether TLS is configured.
func (t TLS) On() bool { return t.CertFile != "" || t.KeyFile != "" }

// Scheme is the scheme of the server's URLs: https with TLS, else http.
func (t TLS) Scheme() string {
	if t.On() {
		return "https"
	}
	return "http"
}

// Listen wraps ln to speak TLS (1.2 at least) with the certificate, or
// returns ln when none is configured. It reads the files now, so a wrong
// path or a key that does not match fails before anything is served.
func (t TLS) Listen(ln net.Listener) (net.Listener, error) {
	c, err := t.Config()
	if c == nil || err != nil {
		return ln, err
	}
	return tls.NewListener(ln, c), nil
}

// Config is the server's TLS configuration (1.2 at least), or nil when
// none is configured; it reads the files now, as Listen does. Servers that
// are not HTTP (the farm's NATS port) take it.
func (t TLS) Config() (*tls.Config, error) {
	if !t.On() {
		return nil, nil
	}
	if t.CertFile == "" || t.KeyFile == "" {
		return nil, errors.New("TLS needs both files: give --tls-cert CERT.pem and --tls-key KEY.pem")
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s and key %s: %w (give PEM files of one key pair)", t.CertFile, t.KeyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
