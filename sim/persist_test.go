package sim

import (
	"encoding/json"
	"testing"

	"github.com/apexagent/apex/sim/adbd"
	"github.com/google/go-cmp/cmp"
)

// TestSaveRestore: a phone started afresh and given what another saved
// has its packages, settings, locale, battery, location and app in front.
func TestSaveRestore(t *testing.T) {
	newPhone := func() *Phone {
		p, err := NewPhone(Options{Seed: 1, Clock: newFakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := newPhone()
	if err := a.Install(adbd.Package{Name: "com.example.todo", Label: "Todo"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Uninstall("com.apex.notes"); err != nil {
		t.Fatal(err)
	}
	a.SetNightMode(true)
	a.PutSetting("global", "animator_duration_scale", "0")
	a.SetProp("persist.sys.locale", "de-DE")
	a.SetBattery(42, true)
	a.SetLocation(52.52, 13.4)
	if err := a.Launch("com.android.settings"); err != nil {
		t.Fatal(err)
	}
	saved := a.Save()
	// Through the file apex sim --state-file writes.
	b, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	var read Saved
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}

	fresh := newPhone()
	if diff := cmp.Diff(saved, fresh.Save()); diff == "" {
		t.Fatal("a fresh phone saves the same as the changed one: the test changes nothing")
	}
	if err := fresh.Restore(read); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(saved, fresh.Save()); diff != "" {
		t.Errorf("restored phone (-saved +restored):\n%s", diff)
	}
	if fg, _ := fresh.Foreground(); fg != "com.android.settings" || !fresh.NightMode() || fresh.language() != "de" {
		t.Errorf("restored phone: foreground %q, night mode %v, language %q", fg, fresh.NightMode(), fresh.language())
	}
}
