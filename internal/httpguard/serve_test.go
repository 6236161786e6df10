package httpguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve runs NewServer(h, l) on loopback and returns its address.
func serve(t *testing.T, h http.Handler, l *Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewServer(h, l)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// admitting admits every request with the bearer token "ok" and answers
// 200; the rest get 401.
var admitting = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer ok" {
		http.Error(w, "no", http.StatusUnauthorized)
		return
	}
	Admit(r)
	io.Copy(io.Discard, r.Body)
	fmt.Fprint(w, "yes")
})

// TestSlowClientsMakeRoom: connections that never finish a request are
// closed, oldest first, past PerIP; an authorised client still gets in.
func TestSlowClientsMakeRoom(t *testing.T) {
	addr := serve(t, admitting, &Limits{PerIP: 4})
	var slow []net.Conn
	for range 10 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, "POST / HTTP/1.1\r\nHost: x\r\n") // and never the rest
		slow = append(slow, c)
	}
	// An authorised request on a new connection answers.
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header.Set("Authorization", "Bearer ok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("authorised request: %d", resp.StatusCode)
	}
	// The oldest slow ones were closed: reading them ends.
	slow[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := slow[0].Read(make([]byte, 1)); err == nil || errors.Is(err, errTimeout(err)) {
		t.Errorf("the oldest slow connection is still open (read: %v)", err)
	}
}

func errTimeout(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return err
	}
	return errors.New("not a timeout")
}

// TestBodyTimeout: a body that stops arriving ends at BodyTimeout, while
// a handler that runs long after reading its body is not cut.
func TestBodyTimeout(t *testing.T) {
	slowErr := make(chan error, 2)
	longRead, release, longErr := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Admit(r)
		_, err := io.ReadAll(r.Body)
		if r.URL.Path == "/slow" {
			slowErr <- err
			return
		}
		close(longRead)
		<-release // past the body timeout
		longErr <- cmpErr(err, r.Context().Err())
		fmt.Fprint(w, "done")
	}), &Limits{BodyTimeout: 300 * time.Millisecond})
	slowBody := func() {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprint(c, "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
	}

	slowBody()
	if err := <-slowErr; err == nil {
		t.Error("reading a body that stopped arriving ended without an error")
	}

	done := make(chan string, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/long", "text/plain", strings.NewReader("body"))
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(b)
	}()
	<-longRead
	slowBody() // its end marks a body timeout's length after /long read its body
	<-slowErr
	close(release)
	if answer := <-done; answer != "done" {
		t.Errorf("long handler answered %q", answer)
	}
	if err := <-longErr; err != nil {
		t.Errorf("long handler after its body: %v", err)
	}
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func TestMaxHeaderBytes(t *testing.T) {
	addr := serve(t, admitting, &Limits{MaxHeaderBytes: 1 << 10})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 64<<10))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.Contains(line, "431") {
		t.Errorf("oversized headers answered %q, want 431", line)
	}
}
