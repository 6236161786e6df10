package lab

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/scene"
)

func wdaGet(t *testing.T, url string) json.RawMessage {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, data)
	}
	var env struct{ Value json.RawMessage }
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	return env.Value
}

func TestIPhones(t *testing.T) {
	l := startLab(t, Options{Android: 1, IOS: 2, StateAddr: "127.0.0.1:0"})
	devs := l.Devices()
	if len(devs) != 3 || devs[0].Platform != "android" || devs[1].Platform != "ios" || devs[2].Platform != "ios" {
		t.Fatalf("devices %+v", devs)
	}
	if devs[0].URL != "" || devs[0].Server() == nil || devs[0].WDA() != nil {
		t.Errorf("android device %+v", devs[0])
	}
	for _, d := range devs[1:] {
		if d.URL != "http://"+d.Addr || d.WDA() == nil || d.Server() != nil || d.Phone.Platform() != "ios" {
			t.Fatalf("iPhone %+v", d)
		}
		var st struct{ Ready bool }
		json.Unmarshal(wdaGet(t, d.URL+"/status"), &st)
		if !st.Ready {
			t.Errorf("%s/status not ready", d.URL)
		}
		var src string
		json.Unmarshal(wdaGet(t, d.URL+"/source"), &src)
		if tr, err := scene.Parse([]byte(src)); err != nil || tr.Format != scene.FormatXCUITest {
			t.Errorf("%s/source: %v", d.URL, err)
		}
		info := d.Info()
		if info.Protocol != "wda" || info.Platform != "ios" || info.URL != d.URL || info.Connect != "--device wda:"+d.URL ||
			info.Foreground != "com.apple.springboard" || !info.Online || !strings.Contains(info.Model, "iPhone") {
			t.Errorf("info %+v", info)
		}
	}
	if info := devs[0].Info(); info.Platform != "android" || info.Protocol != "adb" {
		t.Errorf("android info %+v", info)
	}
	// The state endpoint lists every device, iPhones included.
	resp, err := http.Get(l.StateURL() + "/devices")
	if err != nil {
		t.Fatal(err)
	}
	var list []DeviceInfo
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list) != 3 || list[2].URL != devs[2].URL {
		t.Errorf("GET /devices = %+v", list)
	}
	// Stop is WebDriverAgent going away: connections are refused.
	devs[2].Stop()
	c := &http.Client{Timeout: 2 * time.Second}
	if _, err := c.Get(devs[2].URL + "/status"); err == nil {
		t.Error("stopped iPhone still answers")
	}
	if devs[2].Info().Online {
		t.Error("stopped iPhone online")
	}
}

func TestIPhonesOnly(t *testing.T) {
	l := startLab(t, Options{IOS: 1})
	if len(l.Devices()) != 1 || l.Devices()[0].Platform != "ios" {
		t.Fatalf("IOS 1 without Android: %+v", l.Devices())
	}
	if _, err := Start(t.Context(), Options{IOS: -1}); err == nil {
		t.Error("IOS -1 accepted")
	}
}
