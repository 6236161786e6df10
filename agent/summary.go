package agent

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apexagent/apex/scene"
)

// summaryLen bounds a step's summary, in characters.
const summaryLen = 50

// screenSummary says in at most summaryLen characters what a screen is:
// its app, its title and its key state — "Shop, 13 items, popup",
// "Settings: Network & internet, Wi-Fi on, Airplane mode off". The title
// is the first heading (a text that is no control, in the top tenth of the
// screen); the key state names a popup, counts list items and fields, says
// which field is being typed into and whether the soft keyboard shows, and
// how switches and checkboxes are set — as much as fits.
func screenSummary(sc *scene.Scene) string {
	if sc == nil {
		return "no screen"
	}
	app := appName(sc.Package)
	head := app
	if title := screenTitle(sc); title != "" {
		switch {
		case app == "" || strings.HasPrefix(strings.ToLower(title), strings.ToLower(app)):
			head = title
		default:
			head = app + ": " + title
		}
	}
	var items, fields int
	var switches []scene.Element
	focused := ""
	for _, e := range sc.Elements {
		if e.System || e.Part != "" {
			continue
		}
		switch {
		case e.Flags.Checkable:
			switches = append(switches, e)
		case e.Type == "item":
			items++
		case e.Flags.Editable:
			fields++
			if e.Flags.Focused {
				focused = fieldName(e)
			}
		}
	}
	parts := []string{truncate(head, summaryLen)}
	add := func(s string) {
		if n := utf8.RuneCountInString(strings.Join(append(parts, s), ", ")); n <= summaryLen {
			parts = append(parts, s)
		}
	}
	if p, ok := popupTitle(sc); ok {
		if p != "" {
			add("popup " + p)
		}
		if !strings.HasPrefix(parts[len(parts)-1], "popup") {
			add("popup")
		}
	}
	if items > 0 {
		add(count(items, "item"))
	}
	if fields > 0 {
		add(count(fields, "field"))
	}
	if focused != "" {
		add("in " + truncate(focused, 20))
	}
	if sc.Keyboard {
		add("keyboard")
	}
	if len(switches) > 2 {
		on := 0
		for _, e := range switches {
			if e.Flags.Checked {
				on++
			}
		}
		add(fmt.Sprintf("%d of %d checked", on, len(switches)))
	} else {
		for _, e := range switches {
			state := " off"
			if e.Flags.Checked {
				state = " on"
			}
			add(truncate(label(e), 20) + state)
		}
	}
	return strings.Join(parts, ", ")
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// appName is a package's last word, capitalised: com.apex.shop → Shop.
func appName(pkg string) string {
	w := pkg[strings.LastIndexByte(pkg, '.')+1:]
	r, n := utf8.DecodeRuneInString(w)
	if n == 0 {
		return ""
	}
	return string(unicode.ToUpper(r)) + w[n:]
}

// fieldName names a field by what it is for (its resource id's entry,
// "username"), not by the text typed into it; its description or text
// when it has no id.
func fieldName(e scene.Element) string {
	if id := e.ResourceID; id != "" {
		return id[strings.LastIndexAny(id, "/:")+1:]
	}
	return label(e)
}

// screenTitle is the screen's first heading: a text that is no control,
// near the top (a toolbar's title).
func screenTitle(sc *scene.Scene) string {
	for _, e := range sc.Elements {
		if e.System || e.Part != "" || e.Text == "" || e.Flags.Interactive() || e.Flags.Editable {
			continue
		}
		if _, y := e.Bounds.Center(); sc.Height > 0 && y < sc.Height/10 {
			return e.Text
		}
	}
	return ""
}

// popupTitle reports whether a popup or dialog shows (an alert's title, or
// a control that closes it) and its title when it has one.
func popupTitle(sc *scene.Scene) (string, bool) {
	for _, e := range sc.Elements {
		if !e.System && strings.HasSuffix(e.ResourceID, "alertTitle") {
			return e.Text, true
		}
	}
	_, ok := dismissControl(sc, Step{})
	return "", ok
}
