package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/console"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/internal/browsertest"
	"github.com/apexagent/apex/internal/patience"
	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/crypto/bcrypt"
)

var chromium browsertest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	chromium.Close()
	os.Exit(code)
}

const token = "s3cret-console-token"

// TestConsoleOpensADevice: in a real browser, the console (behind its
// token) lists a host's simulated phone, leases it with Open, shows its
// screen as it changes, and taps it through the host.
func TestConsoleOpensADevice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(90*time.Second))
	defer cancel()
	p := farmtest.Start(ctx, t, 0)
	_, js := p.Conn()
	farmtest.StartHost(ctx, t, js, host.Options{ID: "h1", Sim: 1, RunsDir: t.TempDir(), Playground: playgrounds(t, &seen{})})
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	// The lowest bcrypt cost: the race detector makes each check of a
	// real one (farm.HashToken) take seconds.
	h, err := bcrypt.GenerateFromPassword([]byte(token), bcrypt.MinCost)
	hash := string(h)
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(cctx, js, console.Options{Token: hash}) // the console keeps only the hash
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/api/devices")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/api/devices without the token: %d, want 401", resp.StatusCode)
	}

	tab := chromium.Tab(t, 60*time.Second, "the console leases a phone, shows its screen and taps it")
	openAndTap(t, tab, "admin", chromedp.Navigate(srv.URL+"/?token="+token))
}

// row is the Open button of the console's phone.
const row = `#devices tr[data-id="h1/sim-1"] button`

// openAndTap does before (it signs in as user last), opens h1/sim-1 in the
// console, taps its screen, sees the stream change, and checks the device
// list names user as its holder.
func openAndTap(t *testing.T, tab context.Context, user string, before ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	err := chromedp.Do(tab, append(before,
		chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.Click(chromedp.CSS(row)),
		chromedp.WaitVisible(chromedp.CSS("#screen")),
		tapAndSeeTheStreamChange(),
	)...)
	if err != nil {
		errText, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector("#error").textContent`))
		t.Fatalf("%v (the page says %q)", err, errText)
	}
	holder, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('#devices tr[data-id="h1/sim-1"]').cells[2].textContent`))
	if err != nil || holder != "console:"+user {
		t.Errorf("the device list shows the holder %q (%v), want console:%s", holder, err, user)
	}
}

// TestConsoleProjects: in a real browser, a tester who is not a member of
// the project a phone serves is refused when opening it; a member opens
// it, sees its screen and taps it; neither sees the other project's runs.
func TestConsoleProjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p, srv := doorFarm(ctx, t, &seen{}, map[string]string{"project": "shop"})
	tokens := farmtest.Users(ctx, t, p, []string{"shop", "bank"}, farmtest.Member{User: "alice", Role: auth.Tester, Projects: []string{"shop"}},
		farmtest.Member{User: "bob", Role: auth.Tester, Projects: []string{"bank"}})
	// A run of bank's that sits in the queue (its labels match no phone).
	if _, err := farmtest.Queue(ctx, t, p).Submit(ctx, queue.Run{ID: "rbank", Project: "bank", Name: "b.yaml", Script: []byte("tasks: []"), Labels: map[string]string{"lab": "none"}}); err != nil {
		t.Fatal(err)
	}

	tab := chromium.Tab(t, 90*time.Second, "the console refuses a phone of another project and opens one of the user's")
	openAndTap(t, tab, "alice",
		chromedp.Navigate(srv.URL+"/?token="+tokens["bob"]),
		chromedp.WaitVisible(chromedp.CSS(`#runs tr`)),
		poll(`[...document.querySelectorAll("#runs tbody tr")].some(r => r.cells[0].textContent === "rbank")`),
		chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.Click(chromedp.CSS(row)),
		poll(`/serves project shop only|not a member/.test(document.querySelector("#error").textContent)`),
		chromedp.Navigate(srv.URL+"/?token="+tokens["alice"]),
	)
	runs, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll("#runs tbody tr").length`))
	if err != nil || runs != 0 {
		t.Errorf("alice sees %d runs (%v), want none of bank's", runs, err)
	}
}

// screenHash hashes the frame the console's <img> of the device's MJPEG
// stream shows now.
const screenHash = `(() => {
  const i = document.querySelector("#screen"), c = document.createElement("canvas");
  c.width = i.naturalWidth; c.height = i.naturalHeight;
  const x = c.getContext("2d"); x.drawImage(i, 0, 0);
  const d = x.getImageData(0, 0, c.width, c.height).data;
  let h = 0; for (let k = 0; k < d.length; k += 61) h = (h * 31 + d[k]) | 0;
  return h;
})()`

// tapAndSeeTheStreamChange waits for the stream's first frame, clicks the
// screen (the front door taps the phone) and waits for the stream to show
// another screen.
func tapAndSeeTheStreamChange() chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		return chromedp.Void{}, chromedp.Do(ctx,
			poll(`document.querySelector("#screen").naturalWidth > 0`),
			poll(`(window.before = `+screenHash+`) !== 0`),
			chromedp.Click(chromedp.CSS("#screen")),
			poll(`document.body.dataset.taps === "1"`),
			poll(screenHash+` !== window.before`),
		)
	}
}

func poll(js string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		// The tab's deadline (patience.Of) bounds it, not a poll timeout of its own.
		_, err := chromedp.Poll[bool](js, chromedp.WithPollingTimeout(0))(ctx, t)
		return chromedp.Void{}, err
	}
}

// serveConsole serves a console (the farm's admin token is
// "the-farm-admin-token") until t ends.
func serveConsole(ctx context.Context, t *testing.T, js jetstream.JetStream) *httptest.Server {
	t.Helper()
	cctx, cancel := context.WithCancel(ctx)
	c, err := console.New(cctx, js, console.Options{Token: "the-farm-admin-token"})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	t.Cleanup(func() { srv.Close(); cancel() })
	return srv
}
