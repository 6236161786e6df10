package ios_test

import (
	"strings"
	"testing"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/wda/wdatest"
)

func TestHostTargets(t *testing.T) {
	live := wdatest.New(wdatest.Options{})
	t.Cleanup(live.Close)
	dead := wdatest.New(wdatest.Options{})
	deadURL := dead.URL
	dead.Close()
	env := map[string]string{ios.EnvURLs: " " + live.URL + " ,," + deadURL + "," + live.URL}
	h, err := ios.NewHost(ios.URLsFromEnv(func(k string) string { return env[k] }), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := h.Targets(ctx(t))
	if err != nil || len(ts) != 2 {
		t.Fatalf("Targets = %+v, %v; want the two distinct endpoints", ts, err)
	}
	byState := map[string]device.Target{}
	for _, tg := range ts {
		byState[tg.State] = tg
	}
	ready, down := byState["ready"], byState["offline"]
	if ready.Serial != strings.TrimPrefix(live.URL, "http://") || ready.ID != "wda/"+ready.Serial || ready.Platform != device.IOS || !ready.Ready() {
		t.Errorf("live target = %+v", ready)
	}
	if !strings.HasPrefix(down.Hint, "WDA not reachable at "+deadURL+": start WebDriverAgent with") {
		t.Errorf("dead target hint = %q", down.Hint)
	}
	if sessions := live.Sessions(); sessions != 0 {
		t.Errorf("listing created %d sessions; it must create none", sessions)
	}
	r := device.NewRegistry(h)
	d, tg, err := r.Open(ctx(t), "")
	if err != nil {
		t.Fatalf("Registry.Open of the only ready iPhone: %v", err)
	}
	defer d.Close()
	if tg.ID != ready.ID {
		t.Errorf("opened %s; want %s", tg.ID, ready.ID)
	}
	if _, err := d.Screenshot(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := ios.NewHost([]string{"ftp://nope"}, nil); err == nil {
		t.Error("a bad URL was accepted")
	}
}

func TestSerial(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8100":   "127.0.0.1:8100",
		"127.0.0.1:8100":          "127.0.0.1:8100",
		"https://10.0.0.2:8100":   "https://10.0.0.2:8100",
		"http://h:8100/wda/proxy": "http://h:8100/wda/proxy",
	} {
		if got := ios.Serial(in); got != want {
			t.Errorf("Serial(%q) = %q; want %q", in, got, want)
		}
	}
}
