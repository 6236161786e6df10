package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestSimIOS(t *testing.T) {
	out, l, stop := runSim(t, "sim", "--ios", "2", "--wda-port-base", "0")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || len(l.Devices()) != 2 {
		t.Fatalf("output %q; want two iPhones and no Android phone", out)
	}
	for i, d := range l.Devices() {
		f := strings.Split(lines[i], "\t")
		if len(f) < 4 || f[0] != "ios-"+string(rune('1'+i)) || f[1] != "wda" || f[2] != d.URL || f[3] != "--device wda:"+d.URL {
			t.Fatalf("line %d = %q; want ios-N, wda, the URL, the --device flag", i, lines[i])
		}
		resp, err := http.Get(d.URL + "/status")
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Value struct{ Ready bool }
		}
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if !st.Value.Ready {
			t.Errorf("%s/status: not ready", d.URL)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	out, l, stop = runSim(t, "sim", "--ios", "1", "--android", "1", "--port-base", "0", "--wda-port-base", "0")
	if len(l.Devices()) != 2 || !strings.HasPrefix(out, "android-1\tadb\t") || !strings.Contains(out, "\nios-1\twda\thttp://127.0.0.1:") {
		t.Errorf("--ios 1 --android 1: %q", out)
	}
	stop()
	if _, err := runSimErr(t, "sim", "--android", "0"); err == nil || !strings.Contains(err.Error(), "at least one phone") {
		t.Errorf("--android 0: %v", err)
	}
}

// runSimErr runs `apex sim` expecting it to fail before serving.
func runSimErr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut syncBuffer
	root := NewRoot(&out, &errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}
