package agent_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
)

// suiteTask is one task of the suite: a goal in the controlled language, a
// natural-language goal for the model, and a check of the phone's state.
type suiteTask struct {
	name    string
	app     string // started before the task; "" is the launcher
	goal    string // controlled language (rule planner)
	natural string // the same task in plain words (scripted model)
	check   func(st map[string]any, fg string) error
	pkg     string // whose state check reads; default app
}

func want(cond bool, format string, args ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func item(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func num(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return -1
}

const (
	shop     = "com.apex.shop"
	settings = "com.android.settings"
	notes    = "com.apex.notes"
	login    = "com.apex.login"
	zh       = "com.apex.zhongwen"
)

var suite = []suiteTask{
	{name: "shop search", app: shop,
		goal:    `type "running shoes" into "Search", then check "Pro Running Shoes" exists`,
		natural: "Search the shop for running shoes",
		check: func(st map[string]any, _ string) error {
			return want(st["query"] == "running shoes", "query = %v", st["query"])
		}},
	{name: "shop add to cart", app: shop,
		goal:    `type "running shoes" into "Search", tap "Pro Running Shoes", tap "Add to cart", then check "Cart (1)" exists`,
		natural: "Put the Pro Running Shoes in the cart",
		check: func(st map[string]any, _ string) error {
			c := list(st["cart"])
			return want(len(c) == 1 && item(c[0])["id"] == "p054" && num(item(c[0])["qty"]) == 1, "cart = %v", c)
		}},
	{name: "shop add twice", app: shop,
		goal:    `type "soundbar" into "Search", tap "Deluxe Soundbar", tap "Add to cart", check "Cart (1)" exists, tap "Add to cart", check "Cart (2)" exists`,
		natural: "Add two Deluxe Soundbars to the cart",
		check: func(st map[string]any, _ string) error {
			c := list(st["cart"])
			return want(len(c) == 1 && num(item(c[0])["qty"]) == 2, "cart = %v", c)
		}},
	{name: "shop cart quantity", app: shop,
		goal:    `type "toaster" into "Search", tap "Ultra Toaster", tap "Buy now", tap "Increase quantity", then check "Total: $23.98" exists`,
		natural: "Buy two Ultra Toasters",
		check: func(st map[string]any, fg string) error {
			c := list(st["cart"])
			return want(len(c) == 1 && num(item(c[0])["qty"]) == 2, "cart = %v", c)
		}},
	{name: "shop checkout", app: shop,
		goal: `type "yoga mat" into "Search", tap "Pro Yoga Mat", tap "Buy now", tap "Checkout", type "Ada Lovelace" into "Full name", ` +
			`type "12 Analytical Way" into "Street address", type "London" into "City", type "10001" into "ZIP code", tap "Place order", then check "Thank you!" exists`,
		natural: "Order a Pro Yoga Mat to Ada Lovelace, 12 Analytical Way, London 10001",
		check: func(st map[string]any, _ string) error {
			o := list(st["orders"])
			return want(len(o) == 1 && len(list(st["cart"])) == 0 && item(o[0])["address"] == "Ada Lovelace, 12 Analytical Way, London 10001", "orders = %v", o)
		}},
	{name: "shop checkout refused", app: shop,
		goal:    `type "mug" into "Search", tap "Classic Ceramic Coffee Mug", tap "Buy now", tap "Checkout", tap "Place order", then check "Please fill in all address fields" exists`,
		natural: "Try to place an order for a Classic Ceramic Coffee Mug without an address",
		check: func(st map[string]any, _ string) error {
			return want(len(list(st["orders"])) == 0 && st["form_error"] == "Please fill in all address fields", "orders=%v form_error=%v", st["orders"], st["form_error"])
		}},
	{name: "shop express shipping", app: shop,
		goal:    `type "kettle" into "Search", tap "Classic Electric Kettle", tap "Buy now", tap "Checkout", tap "Express ($9.99, next day)", then check "Express ($9.99, next day)" is checked`,
		natural: "Choose express shipping for a Classic Electric Kettle",
		check: func(st map[string]any, _ string) error {
			return want(st["shipping"] == "express", "shipping = %v", st["shipping"])
		}},
	{name: "settings wifi off", app: settings,
		goal:    `tap "Network & internet", tap "Wi-Fi", then check "Wi-Fi" is off`,
		natural: "Turn Wi-Fi off",
		check: func(st map[string]any, _ string) error {
			return want(st["wifi"] == false, "wifi = %v", st["wifi"])
		}},
	{name: "settings airplane", app: settings,
		goal:    `tap "Network & internet", tap "Airplane mode", check "Airplane mode" is on, then check "Wi-Fi" is off`,
		natural: "Switch on airplane mode",
		check: func(st map[string]any, _ string) error {
			return want(st["airplane"] == true && st["wifi"] == false, "airplane=%v wifi=%v", st["airplane"], st["wifi"])
		}},
	{name: "settings bluetooth", app: settings,
		goal:    `tap "Connected devices", tap "Bluetooth", then check "Visible as Apex Sim" exists`,
		natural: "Turn Bluetooth on",
		check: func(st map[string]any, _ string) error {
			return want(st["bluetooth"] == true, "bluetooth = %v", st["bluetooth"])
		}},
	{name: "settings dark theme by search", app: settings,
		goal:    `type "dark" into "Search settings", tap "Dark theme", tap "Dark theme", then check "Dark theme" is checked`,
		natural: "Find the dark theme setting and switch it on",
		check: func(st map[string]any, _ string) error {
			return want(st["dark_mode"] == true, "dark_mode = %v", st["dark_mode"])
		}},
	{name: "settings brightness", app: settings,
		goal:    `tap "Display", tap "Increase brightness", check "Brightness 70%" exists, tap "Increase brightness", then check "Brightness" is greater than 75`,
		natural: "Raise the brightness by two steps",
		check: func(st map[string]any, _ string) error {
			return want(num(st["brightness"]) == 80, "brightness = %v", st["brightness"])
		}},
	{name: "settings location off", app: settings,
		goal:    `tap "Location", tap "Use location", then check "Use location" is off`,
		natural: "Stop using location",
		check: func(st map[string]any, _ string) error {
			return want(st["location"] == false, "location = %v", st["location"])
		}},
	{name: "notes add", app: notes,
		goal:    `tap "Add note", type "Apex demo" into "Title", type "Written by apex" into "Note", tap "Save", then check "Notes (41)" exists`,
		natural: "Add a note titled Apex demo saying Written by apex",
		check: func(st map[string]any, _ string) error {
			ns := list(st["notes"])
			last := item(ns[len(ns)-1])
			return want(len(ns) == 41 && last["title"] == "Apex demo" && last["body"] == "Written by apex", "%d notes, last %v", len(ns), last)
		}},
	{name: "notes delete", app: notes,
		goal:    `long press "Groceries 1", tap "Delete", then check "Notes (39)" exists`,
		natural: "Delete the note Groceries 1",
		check: func(st map[string]any, _ string) error {
			ns := list(st["notes"])
			return want(len(ns) == 39 && item(ns[0])["title"] == "Meeting notes 1", "%d notes, first %v", len(ns), ns[0])
		}},
	{name: "notes edit", app: notes,
		goal:    `tap "Book list 1", type "Oat milk and tea" into "Milk, eggs, bread and coffee", tap "Save", then check "Book list 1 · Oat milk and tea" exists`,
		natural: "Change the note Book list 1 to say Oat milk and tea",
		check: func(st map[string]any, _ string) error {
			n := item(list(st["notes"])[2])
			return want(n["body"] == "Oat milk and tea", "note 3 = %v", n)
		}},
	{name: "notes scroll to an old note", app: notes,
		goal:    `scroll down to "Garden 4", tap "Garden 4", then check "Edit note" exists`,
		natural: "Open the note Garden 4",
		check: func(st map[string]any, _ string) error {
			return want(item(st["editing"])["title"] == "Garden 4", "editing = %v", st["editing"])
		}},
	{name: "login", app: login,
		goal:    `type "demo" into "Username", type "apex123" into "Password", tap "Sign in", then check "Welcome, demo!" exists`,
		natural: "Sign in as demo with password apex123",
		check: func(st map[string]any, _ string) error {
			return want(num(st["logins"]) == 1 && st["user"] == "demo", "logins=%v user=%v", st["logins"], st["user"])
		}},
	{name: "login refused", app: login,
		goal:    `type "demo" into "Username", type "nope" into "Password", tap "Sign in", check "Wrong username or password" exists, then check "Welcome, demo!" does not exist`,
		natural: "Try to sign in as demo with the password nope",
		check: func(st map[string]any, _ string) error {
			return want(num(st["logins"]) == 0 && st["error"] == "Wrong username or password", "logins=%v error=%v", st["logins"], st["error"])
		}},
	{name: "login remember me", app: login,
		goal:    `tap "Remember me", then check "Remember me" is checked`,
		natural: "Tick remember me",
		check: func(st map[string]any, _ string) error {
			return want(st["remember"] == true, "remember = %v", st["remember"])
		}},
	{name: "login and sign out", app: login,
		goal:    `type "demo" into "Username", type "apex123" into "Password", tap "Sign in", tap "Sign out", then check "Welcome back" exists`,
		natural: "Sign in as demo (password apex123) and sign out again",
		check: func(st map[string]any, _ string) error {
			return want(num(st["logins"]) == 1 && st["user"] == "", "logins=%v user=%v", st["logins"], st["user"])
		}},
	{name: "zh add item", app: zh,
		goal:    `在“添加商品”输入“酸奶”，点击“添加”，然后确认出现“酸奶 · 未完成”`,
		natural: "把酸奶加到购物清单",
		check: func(st map[string]any, _ string) error {
			it := list(st["items"])
			return want(len(it) == 5 && item(it[4])["name"] == "酸奶", "items = %v", it)
		}},
	{name: "zh mark done", app: zh,
		goal:    `点击“完成 牛奶”，确认“完成 牛奶”已勾选，然后确认“共 4 项，已完成 2 项”存在`,
		natural: "把牛奶标记为已完成",
		check: func(st map[string]any, _ string) error {
			return want(item(list(st["items"])[0])["done"] == true, "items = %v", st["items"])
		}},
	{name: "zh clear done", app: zh,
		goal:    `点击“清除已完成”，确认“鸡蛋”不存在`,
		natural: "清除已完成的商品",
		check: func(st map[string]any, _ string) error {
			it := list(st["items"])
			return want(len(it) == 3 && !slices.ContainsFunc(it, func(v any) bool { return item(v)["name"] == "鸡蛋" }), "items = %v", it)
		}},
	{name: "zh delete", app: zh,
		goal:    `长按“苹果”，点击“删除”，然后确认“苹果 · 未完成”不存在`,
		natural: "从清单里删除苹果",
		check: func(st map[string]any, _ string) error {
			return want(len(list(st["items"])) == 3, "items = %v", st["items"])
		}},
	{name: "settings build number once", app: settings,
		goal:    `tap "About phone", tap "UQ1A.240205.004", then check "UQ1A.240205.004" exists`,
		natural: "Tap the build number on the About phone page",
		check: func(st map[string]any, _ string) error {
			return want(num(st["build_taps"]) == 1 && st["developer"] == false, "build_taps=%v developer=%v", st["build_taps"], st["developer"])
		}},
	{name: "settings wifi off by verb", app: settings,
		goal:    `tap "Network & internet", turn off "Wi-Fi"`,
		natural: "Switch off Wi-Fi in the network settings",
		check: func(st map[string]any, _ string) error {
			return want(st["wifi"] == false && st["airplane"] == false, "wifi=%v airplane=%v", st["wifi"], st["airplane"])
		}},
	{name: "settings dark theme by verb", app: settings,
		goal:    `tap "Display", enable "Dark theme"`,
		natural: "Enable the dark theme",
		check: func(st map[string]any, _ string) error {
			return want(st["dark_mode"] == true, "dark_mode = %v", st["dark_mode"])
		}},
	{name: "settings bluetooth in Chinese", app: settings,
		goal:    `点击“Connected devices”，打开“Bluetooth”`,
		natural: "打开蓝牙",
		check: func(st map[string]any, _ string) error {
			return want(st["bluetooth"] == true, "bluetooth = %v", st["bluetooth"])
		}},
	{name: "login remember me by verb", app: login,
		goal:    `make sure "Remember me" is on`,
		natural: "Make sure remember me is ticked",
		check: func(st map[string]any, _ string) error {
			return want(st["remember"] == true, "remember = %v", st["remember"])
		}},
	{name: "shop remove by quantity", app: shop,
		goal:    `type "mug" into "Search", tap "Classic Ceramic Coffee Mug", tap "Buy now", tap "Decrease quantity", then check "Your cart is empty" exists`,
		natural: "Put a Classic Ceramic Coffee Mug in the cart, then take it out again",
		check: func(st map[string]any, _ string) error {
			return want(len(list(st["cart"])) == 0, "cart = %v", st["cart"])
		}},
	{name: "zh add two items", app: zh,
		goal:    `在“添加商品”输入“酸奶”，点击“添加”，在“添加商品”输入“香蕉”，点击“添加”，然后确认出现“共 6 项，已完成 1 项”`,
		natural: "把酸奶和香蕉加到购物清单",
		check: func(st map[string]any, _ string) error {
			it := list(st["items"])
			return want(len(it) == 6 && item(it[4])["name"] == "酸奶" && item(it[5])["name"] == "香蕉", "items = %v", it)
		}},
	{name: "zh tick by verb", app: zh,
		goal:    `勾选“完成 面包”`,
		natural: "勾选面包",
		check: func(st map[string]any, _ string) error {
			return want(item(list(st["items"])[2])["done"] == true, "items = %v", st["items"])
		}},
	{name: "launcher open settings", app: "",
		goal: `open "Settings", then check "Network & internet" exists`, natural: "Open the Settings app", pkg: settings,
		check: func(_ map[string]any, fg string) error { return want(fg == settings, "foreground = %s", fg) }},
	{name: "launcher open shopping list", app: "",
		goal: `点击“购物清单”，确认出现“共 4 项，已完成 1 项”`, natural: "打开购物清单", pkg: zh,
		check: func(_ map[string]any, fg string) error { return want(fg == zh, "foreground = %s", fg) }},
}

// noPopupSeed starts the Shop without its sale popup (found by
// TestSeedsPopup); popupSeed with it.
const (
	noPopupSeed = 2
	popupSeed   = 1
)

// runSuiteTask runs one task on a fresh phone and checks the phone's state.
func runSuiteTask(t *testing.T, tk suiteTask, rt *agent.Runtime, goal string) *agent.Result {
	p := startPhone(t, noPopupSeed)
	p.launch(t, tk.app)
	st := openStore(t)
	res, err := rt.Act(ctxT(t, 3*time.Minute), agent.Task{Goal: goal, Driver: p.drv, DeviceID: "sim", Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Done {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
	}
	pkg := tk.pkg
	if pkg == "" {
		pkg = tk.app
	}
	fg, _ := p.dev.Phone.Foreground()
	if err := tk.check(p.state(t, pkg), fg); err != nil {
		t.Fatalf("the agent says done, but the phone disagrees: %v\n%s", err, dump(res.Events))
	}
	// Every five steps the orchestrator compressed the context: the plan,
	// recent ≤50-character summaries and what is left.
	ctxs := payloads[struct {
		Progress string `json:"progress"`
	}](t, res.Events, event.EvContext)
	if want := (len(res.Steps) - 1) / 5; len(ctxs) != want {
		t.Fatalf("%d compressed contexts for %d steps, want %d", len(ctxs), len(res.Steps), want)
	}
	for i, c := range ctxs {
		if !strings.HasPrefix(c.Progress, fmt.Sprintf("done %d: ", 5*(i+1))) || len(c.Progress) > 700 {
			t.Fatalf("context %d: %q", i, c.Progress)
		}
	}
	for _, sr := range res.Steps {
		if n := len([]rune(sr.Summary)); n == 0 || n > 50 {
			t.Fatalf("step %d summary %q: %d characters", sr.ID, sr.Summary, n)
		}
		// It says what the screen became, not the step again.
		if strings.Contains(sr.Summary, "(locate:") || strings.Contains(sr.Summary, "(value:") || strings.HasPrefix(sr.Summary, "check ") {
			t.Fatalf("step %d summary %q repeats the step", sr.ID, sr.Summary)
		}
	}
	// The store alone tells the same story.
	evs, err := st.Events(ctxT(t, 10*time.Second), res.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	re, err := agent.Replay(evs)
	if err != nil {
		t.Fatal(err)
	}
	if re.Status != res.Status || re.Summary != res.Summary || len(re.Steps) != len(res.Steps) {
		t.Fatalf("replay from the store = %s %q (%d steps), want %s %q (%d steps)", re.Status, re.Summary, len(re.Steps), res.Status, res.Summary, len(res.Steps))
	}
	return res
}

// TestSuiteRules runs every task of the suite by the rule planner, each on
// a phone of its own, several at once.
func TestSuiteRules(t *testing.T) {
	rt, err := agent.New(agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(suite) < 30 {
		t.Fatalf("the suite has %d tasks; the issue asks for at least 30", len(suite))
	}
	eachTask(t, 0, func(t *testing.T, tk suiteTask) {
		res := runSuiteTask(t, tk, rt, tk.goal)
		if res.ModelCalls != 0 {
			t.Errorf("the rule planner made %d model calls", res.ModelCalls)
		}
		t.Logf("%s", res.Summary)
	})
}

// suiteParallel is how many suite tasks run at once, each on its own
// phone. A task mostly waits for its phone's screen to settle, so more
// run at once than the test's -parallel (the CPUs) allows; under the race
// detector a task is CPU-bound, and fewer do.
func suiteParallel() int {
	if agent.RaceEnabled {
		return 2
	}
	return 6
}

// raceSample: under the race detector (≥ 10× slower) a suite runs every
// raceSample-th task, from its own offset, so the two suites together
// still run a third of the tasks raced; without it every task runs.
const raceSample = 3

// eachTask runs f for the suite's tasks as subtests, suiteParallel at a
// time (t.Run may be called from several goroutines); offset picks the
// raced sample.
func eachTask(t *testing.T, offset int, f func(t *testing.T, tk suiteTask)) {
	sem := make(chan struct{}, suiteParallel())
	var wg sync.WaitGroup
	for i, tk := range suite {
		if agent.RaceEnabled && i%raceSample != offset {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t.Run(tk.name, func(t *testing.T) { f(t, tk) })
		}()
	}
	wg.Wait()
}

// suiteTask named name.
func taskNamed(t testing.TB, name string) suiteTask {
	for _, tk := range suite {
		if tk.name == name {
			return tk
		}
	}
	t.Fatalf("no suite task %q", name)
	return suiteTask{}
}
