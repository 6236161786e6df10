package device

import (
	"fmt"
	"sort"
	"strings"
)

// Key is a hardware or navigation key, named independently of platform.
type Key string

const (
	KeyHome       Key = "home"
	KeyBack       Key = "back"
	KeyEnter      Key = "enter"
	KeyDelete     Key = "delete"
	KeyRecents    Key = "recents"
	KeyAppSwitch  Key = "app_switch"
	KeyVolumeUp   Key = "volume_up"
	KeyVolumeDown Key = "volume_down"
	KeyPower      Key = "power"
	KeyTab        Key = "tab"
	KeyEscape     Key = "escape"
	KeySpace      Key = "space"
	KeyUp         Key = "up"
	KeyDown       Key = "down"
	KeyLeft       Key = "left"
	KeyRight      Key = "right"
	KeySearch     Key = "search"
	KeyMenu       Key = "menu"
)

// Keys lists every key Apex knows, in a stable order.
func Keys() []Key {
	ks := make([]Key, 0, len(keyAliases))
	seen := map[Key]bool{}
	for _, k := range keyAliases {
		if !seen[k] {
			seen[k] = true
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// keyAliases maps the names people and models use to a Key.
var keyAliases = map[string]Key{
	"home": KeyHome, "back": KeyBack, "enter": KeyEnter, "return": KeyEnter,
	"delete": KeyDelete, "backspace": KeyDelete, "del": KeyDelete,
	"recents": KeyRecents, "recent_apps": KeyRecents, "app_switch": KeyAppSwitch,
	"app_switcher": KeyAppSwitch, "volume_up": KeyVolumeUp, "volume_down": KeyVolumeDown,
	"power": KeyPower, "tab": KeyTab, "escape": KeyEscape, "esc": KeyEscape,
	"space": KeySpace, "up": KeyUp, "down": KeyDown, "left": KeyLeft, "right": KeyRight,
	"search": KeySearch, "menu": KeyMenu,
}

// ParseKey reads a key name case-insensitively, accepting common aliases
// ("Enter", "Return", "Backspace", "volume-up").
func ParseKey(s string) (Key, error) {
	norm := strings.ToLower(strings.NewReplacer("-", "_", " ", "_").Replace(strings.TrimSpace(s)))
	if k, ok := keyAliases[norm]; ok {
		return k, nil
	}
	names := make([]string, 0, len(Keys()))
	for _, k := range Keys() {
		names = append(names, string(k))
	}
	return "", fmt.Errorf("unknown key %q: use one of %s", s, strings.Join(names, ", "))
}
