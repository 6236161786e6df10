package sim

import (
	"fmt"
	"testing"
	"time"
)

func TestSettingsTogglesPagesAndSearch(t *testing.T) {
	p, _ := newTestPhone(t, 1)
	openApp(t, p, "Settings")
	tapOn(t, p, "Network & internet")
	wifi := dumpOf(t, p).must("wifi")
	if wifi.Class != "android.widget.Switch" || wifi.Checked != "true" || wifi.Checkable != "true" {
		t.Fatalf("wifi switch = %+v", wifi)
	}
	tapOn(t, p, "wifi")
	if d := dumpOf(t, p); d.must("wifi").Checked != "false" || d.find("Off") == nil {
		t.Errorf("wifi after tap: %s", d.texts())
	}
	tapOn(t, p, "airplane")
	if n := dumpOf(t, p).must("wifi"); n.Enabled != "false" {
		t.Errorf("wifi switch enabled in airplane mode: %+v", n)
	}
	p.KeyEvent(KeycodeBack)
	tapOn(t, p, "search")
	p.InputText("dark")
	d := dumpOf(t, p)
	if d.find("Network & internet") != nil || d.find("Dark theme") == nil {
		t.Fatalf("search 'dark': %s", d.texts())
	}
	tapOn(t, p, "Dark theme")
	if _, act := p.Foreground(); act != ".SubSettings" || dumpOf(t, p).find("Display") == nil {
		t.Fatalf("search result did not open Display")
	}
	before, _ := p.Screenshot()
	tapOn(t, p, "dark_mode")
	after, _ := p.Screenshot()
	if string(before) == string(after) {
		t.Error("dark theme did not change the screenshot")
	}
	st, _ := p.State("com.android.settings")
	if st["wifi"] != false || st["airplane"] != true || st["dark_mode"] != true || st["bluetooth"] != false {
		t.Errorf("settings state = %v", st)
	}
}

func TestSettingsBuildNumberSevenTaps(t *testing.T) {
	p, _ := newTestPhone(t, 1)
	openApp(t, p, "Settings")
	tapOn(t, p, "About phone")
	for range 7 {
		tapOn(t, p, "build_number")
	}
	if d := dumpOf(t, p); d.find("You are now a developer!") == nil || d.find("Developer options enabled") == nil {
		t.Errorf("after 7 taps: %s", d.texts())
	}
}

func TestNotesAddEditDelete(t *testing.T) {
	p, _ := newTestPhone(t, 1)
	openApp(t, p, "Notes")
	if d := dumpOf(t, p); d.find("Notes (40)") == nil {
		t.Fatalf("notes title: %s", d.texts())
	}
	tapOn(t, p, "Add note")
	if !p.KeyboardShown() {
		t.Error("new note: title field not focused")
	}
	p.InputText("Call Mom")
	tapOn(t, p, "note_body")
	p.InputText("Sunday at 5")
	tapOn(t, p, "save")
	d := dumpOf(t, p)
	if d.find("Notes (41)") == nil {
		t.Fatalf("after save: %s", d.texts())
	}
	// The new note is last: scroll to the end of the long list.
	list := d.must("notes")
	for range 30 {
		x, _ := list.center()
		p.Swipe(x, list.y1-40, x, list.y0+40, 200*time.Millisecond)
	}
	tapOn(t, p, "Call Mom")
	if dumpOf(t, p).find("Edit note") == nil {
		t.Fatal("tapping a note did not open the editor")
	}
	tapOn(t, p, "note_title")
	for range len("Mom") {
		p.KeyEvent(KeycodeDel)
	}
	p.InputText("Dad")
	tapOn(t, p, "save")
	st, _ := p.State("com.apex.notes")
	notes := st["notes"].([]any)
	last := notes[len(notes)-1].(map[string]any)
	if last["title"] != "Call Dad" || last["body"] != "Sunday at 5" {
		t.Fatalf("edited note = %v", last)
	}
	// Long press the first note and confirm the delete dialog.
	first := dumpOf(t, p).all("note")[0]
	x, y := first.center()
	p.Swipe(x, y, x, y, time.Second)
	if dumpOf(t, p).find("Delete note?") == nil {
		t.Fatal("long press did not open the delete dialog")
	}
	tapOn(t, p, "confirm_delete")
	st, _ = p.State("com.apex.notes")
	if n := len(st["notes"].([]any)); n != 40 {
		t.Errorf("%d notes after delete, want 40", n)
	}
	// Delete from the editor too.
	tapOn(t, p, dumpOf(t, p).all("note")[0].child("title"))
	tapOn(t, p, "Delete note")
	st, _ = p.State("com.apex.notes")
	if n := len(st["notes"].([]any)); n != 39 {
		t.Errorf("%d notes after deleting from the editor, want 39", n)
	}
}

func TestLoginWrongThenRight(t *testing.T) {
	p, _ := newTestPhone(t, 1)
	openApp(t, p, "Login")
	tapOn(t, p, "username")
	p.InputText("demo")
	tapOn(t, p, "password")
	p.InputText("guess")
	pw := dumpOf(t, p).must("password")
	if pw.Password != "true" || pw.Text != "•••••" {
		t.Errorf("password field = %+v", pw)
	}
	p.KeyEvent(KeycodeBack) // hides the keyboard only
	if pkg, _ := p.Foreground(); pkg != "com.apex.login" || p.KeyboardShown() {
		t.Fatalf("BACK with keyboard up: foreground %s, keyboard %v", pkg, p.KeyboardShown())
	}
	tapOn(t, p, "sign_in")
	if d := dumpOf(t, p); d.find("Wrong username or password") == nil {
		t.Fatalf("no error for a wrong password: %s", d.texts())
	}
	tapOn(t, p, "password")
	for range 5 {
		p.KeyEvent(KeycodeDel)
	}
	p.InputText("apex123")
	p.KeyEvent(KeycodeEnter)
	tapOn(t, p, "sign_in")
	if d := dumpOf(t, p); d.find("Welcome, demo!") == nil {
		t.Fatalf("right password: %s", d.texts())
	}
	if _, act := p.Foreground(); act != ".WelcomeActivity" {
		t.Errorf("activity = %s", act)
	}
}

func TestChineseApp(t *testing.T) {
	p, _ := newTestPhone(t, 1)
	openApp(t, p, "购物清单")
	if d := dumpOf(t, p); d.find("共 4 项，已完成 1 项") == nil {
		t.Fatalf("summary: %s", d.texts())
	}
	tapOn(t, p, "new_item")
	p.InputText("西红柿")
	tapOn(t, p, "添加")
	d := dumpOf(t, p)
	if d.find("西红柿") == nil || d.find("共 5 项，已完成 1 项") == nil {
		t.Fatalf("after adding: %s", d.texts())
	}
	tapOn(t, p, "完成 牛奶")
	if d := dumpOf(t, p); d.find("共 5 项，已完成 2 项") == nil {
		t.Errorf("after ticking 牛奶: %s", d.texts())
	}
	tapOn(t, p, "清除已完成")
	st, _ := p.State("com.apex.zhongwen")
	var names []string
	for _, it := range st["items"].([]any) {
		names = append(names, it.(map[string]any)["name"].(string))
	}
	if fmt.Sprint(names) != "[面包 苹果 西红柿]" {
		t.Errorf("items after clearing done = %v", names)
	}
}

func TestLockUnlockAndKeys(t *testing.T) {
	p, _ := newTestPhone(t, 1)
	p.KeyEvent(KeycodePower)
	if p.Awake() || !p.Locked() {
		t.Fatal("POWER did not turn the screen off and lock")
	}
	shot, _ := p.Screenshot()
	p.KeyEvent(KeycodePower)
	if !p.Awake() || !p.Locked() {
		t.Fatal("second POWER: want awake and locked")
	}
	d := dumpOf(t, p)
	if d.find("Swipe up to unlock") == nil || d.must("keyguard_clock").Package != "com.android.systemui" {
		t.Fatalf("keyguard: %s", d.texts())
	}
	lit, _ := p.Screenshot()
	if string(shot) == string(lit) {
		t.Error("screen-off and keyguard screenshots are identical")
	}
	tapOn(t, p, "Swipe up to unlock") // taps do not unlock
	if !p.Locked() {
		t.Fatal("a tap unlocked the keyguard")
	}
	w, h, _ := p.Display()
	p.Swipe(w/2, h*3/4, w/2, h/4, 300*time.Millisecond)
	if p.Locked() {
		t.Fatal("swipe up did not unlock")
	}
	p.KeyEvent(KeycodeSleep)
	p.KeyEvent(KeycodeWakeup)
	p.KeyEvent(KeycodeMenu)
	if p.Locked() || !p.Awake() {
		t.Fatal("SLEEP, WAKEUP, MENU: want awake and unlocked")
	}
	openApp(t, p, "Notes")
	openApp(t, p, "Shop")
	p.KeyEvent(KeycodeAppSwitch)
	d = dumpOf(t, p)
	if d.find("Notes") == nil || d.find("Clear all") == nil {
		t.Fatalf("overview: %s", d.texts())
	}
	tapOn(t, p, "Notes")
	if pkg, _ := p.Foreground(); pkg != "com.apex.notes" {
		t.Errorf("overview tap opened %s", pkg)
	}
	tapOn(t, p, "Home") // the navigation bar's home button
	if pkg, _ := p.Foreground(); pkg != Launcher {
		t.Errorf("nav bar Home: foreground %s", pkg)
	}
}

func TestLaunchInstallForceStop(t *testing.T) {
	p, _ := newTestPhone(t, 1)
	if err := p.Launch("com.example.missing"); err == nil {
		t.Error("launching a missing package succeeded")
	}
	if err := p.Install(adbdPackage("com.example.hello", "Hello")); err != nil {
		t.Fatal(err)
	}
	if dumpOf(t, p).find("Hello") == nil {
		t.Error("installed app has no launcher icon")
	}
	tapOn(t, p, "Hello")
	if d := dumpOf(t, p); d.find("Hello is installed.") == nil {
		t.Errorf("installed app screen: %s", d.texts())
	}
	if err := p.Launch("com.apex.shop"); err != nil {
		t.Fatal(err)
	}
	tapOn(t, p, "search")
	p.InputText("lamp")
	p.ForceStop("com.apex.shop")
	if pkg, _ := p.Foreground(); pkg != Launcher {
		t.Errorf("force-stop left %s in front", pkg)
	}
	p.Launch("com.apex.shop")
	if n := dumpOf(t, p).must("search"); n.Text != "Search" {
		t.Errorf("session state survived force-stop: search = %q", n.Text)
	}
}
