package attack

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files
// and returns their paths and a client that trusts the certificate.
func selfSigned(t *testing.T) (cert, key string, client *http.Client) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "apex attack test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	parsed, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	return cert, key, &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// status sends GET url with a bearer token and returns the answer's code
// and Retry-After.
func status(t *testing.T, c *http.Client, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// guessing is the attack on a token: ten wrong ones are answered 401, the
// next request 429 with Retry-After — even with the right token, from that
// address, until the window ends.
func guessing(t *testing.T, c *http.Client, url, token string) {
	t.Helper()
	if code, _ := status(t, c, url, token); code != 200 {
		t.Fatalf("the right token over TLS: %d", code)
	}
	for i := range 10 {
		if code, _ := status(t, c, url, "guess-"+string(rune('a'+i))); code != 401 {
			t.Fatalf("wrong token %d: %d, want 401", i, code)
		}
	}
	code, retry := status(t, c, url, "guess-k")
	if code != 429 || retry == "" {
		t.Errorf("the 11th guess: %d Retry-After %q, want 429 with Retry-After", code, retry)
	}
	if code, _ := status(t, c, url, token); code != 429 {
		t.Errorf("the right token after ten guesses from the same address: %d, want 429 until the window ends", code)
	}
	plain := strings.Replace(url, "https://", "http://", 1)
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(plain); err == nil {
		if resp.StatusCode < 400 {
			t.Errorf("plain HTTP to the TLS port answered %d", resp.StatusCode)
		}
		resp.Body.Close()
	}
}

// TestPlaygroundTLSAndGuessing: apex playground --tls-cert/--tls-key
// serves HTTPS to a real TLS client, and limits token guessing.
func TestPlaygroundTLSAndGuessing(t *testing.T) {
	cert, key, client := selfSigned(t)
	const token = "attack-test-token-0123456789abcdef"
	url, _ := playground(t, "", []string{"APEX_PLAYGROUND_TOKEN=" + token}, "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("the playground printed %q, want an https URL", url)
	}
	guessing(t, client, url+"status", token)
}

// TestMCPTLSAndGuessing: apex mcp --http with --tls-cert/--tls-key serves
// HTTPS, and limits token guessing.
func TestMCPTLSAndGuessing(t *testing.T) {
	cert, key, client := selfSigned(t)
	const token = "attack-test-token-0123456789abcdef"
	cmd := exec.Command(apexBin, "mcp", "--adb=false", "--sim", "--http", "127.0.0.1:0", "--token", token,
		"--tls-cert", cert, "--tls-key", key, "--dir", t.TempDir())
	cmd.Env = cleanEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "serving MCP over HTTP on "); ok {
				u, _, _ = strings.Cut(u, " ")
				urls <- u
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(60 * time.Second):
		t.Fatal("apex mcp did not serve within 60s")
	}
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("apex mcp serves at %q, want https", url)
	}
	// GET of the MCP endpoint without a session: 200 or 4xx from the SDK
	// once authorised, never 401.
	if code, _ := status(t, client, url, token); code == 401 || code == 429 {
		t.Fatalf("the right token over TLS: %d", code)
	}
	for i := range 10 {
		if code, _ := status(t, client, url, "guess-"+string(rune('a'+i))); code != 401 {
			t.Fatalf("wrong token %d: %d, want 401", i, code)
		}
	}
	if code, retry := status(t, client, url, token); code != 429 || retry == "" {
		t.Errorf("the right token after ten guesses: %d Retry-After %q, want 429 with Retry-After", code, retry)
	}
}

// TestFarmTLSAndGuessing: apex farm serve with --tls-cert/--tls-key serves
// its console over HTTPS, limiting token guessing, and its NATS client
// port over TLS: a client that trusts the certificate (--tls-ca) gets in,
// one that does not is refused.
func TestFarmTLSAndGuessing(t *testing.T) {
	cert, key, client := selfSigned(t)
	const token = "attack-test-token-0123456789abcdef"
	cmd := exec.Command(apexBin, "farm", "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
		"--token", token, "--tls-cert", cert, "--tls-key", key)
	cmd.Env = cleanEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	printed := make(chan [2]string, 1)
	go func() {
		var nats string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "apex farm: serving on "); ok {
				nats, _, _ = strings.Cut(u, " ")
			}
			if u, ok := strings.CutPrefix(sc.Text(), "apex farm: console on "); ok {
				printed <- [2]string{nats, u}
			}
		}
	}()
	var urls [2]string
	select {
	case urls = <-printed:
	case <-time.After(60 * time.Second):
		t.Fatal("apex farm serve printed no console URL within 60s")
	}
	if !strings.HasPrefix(urls[0], "tls://127.0.0.1:") || !strings.HasPrefix(urls[1], "https://127.0.0.1:") {
		t.Fatalf("apex farm serve printed %q and %q, want tls:// and https:// URLs", urls[0], urls[1])
	}
	for _, tc := range []struct {
		name string
		ca   []string
		ok   bool
	}{{"trusting the certificate", []string{"--tls-ca", cert}, true}, {"not trusting it", nil, false}} {
		devices := exec.Command(apexBin, append([]string{"farm", "devices", "--farm", urls[0], "--token", token}, tc.ca...)...)
		devices.Env = cleanEnv()
		out, err := devices.CombinedOutput()
		if (err == nil) != tc.ok {
			t.Errorf("apex farm devices over TLS %s: %v, want ok=%v\n%s", tc.name, err, tc.ok, out)
		}
	}
	guessing(t, client, urls[1]+"api/devices", token)
}
