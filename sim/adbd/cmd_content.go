package adbd

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apexagent/apex/internal/lazy"
)

// settingsURI matches the settings provider's tables.
var settingsURI = lazy.Regexp(`^content://settings/(system|secure|global)$`)

// whereName matches the one selection tools send: name='KEY' (or "KEY").
var whereName = lazy.Regexp(`^\s*name\s*=\s*['"]([^'"]+)['"]\s*$`)

// cmdContent is `content insert|update|query|delete --uri
// content://settings/NS …`: the settings provider is the one content
// provider on the simulated phone (mobile-mcp rotates the screen this way).
func cmdContent(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) == 0 {
		c.printf("usage: adb shell content [subcommand] [options]\n\nusage: adb shell content insert --uri <URI> [--user <USER_ID>] --bind <BINDING> [--bind <BINDING>...]\n")
		c.printf("usage: adb shell content update --uri <URI> [--user <USER_ID>] [--where <WHERE>] --bind <BINDING>...\n")
		c.printf("usage: adb shell content delete --uri <URI> [--user <USER_ID>] --where <WHERE>\n")
		c.printf("usage: adb shell content query --uri <URI> [--user <USER_ID>] [--projection <PROJECTION>] [--where <WHERE>] [--sort <SORT_ORDER>]\n")
		return 255
	}
	var uri, where, projection string
	binds := map[string]string{}
	for i := 1; i+1 < len(a); i += 2 {
		switch a[i] {
		case "--uri":
			uri = a[i+1]
		case "--where":
			where = a[i+1]
		case "--projection":
			projection = a[i+1]
		case "--bind":
			// name:TYPE:value, TYPE one of s, i, l, f, d, b, n.
			parts := strings.SplitN(a[i+1], ":", 3)
			if len(parts) != 3 {
				return c.fail(1, "[ERROR] Binding must be name:type:value: %s", a[i+1])
			}
			binds[parts[0]] = parts[2]
		case "--user", "--sort":
		default:
			return c.fail(1, "[ERROR] Unsupported argument: %s", a[i])
		}
	}
	m := settingsURI().FindStringSubmatch(uri)
	if m == nil {
		c.printf("[ERROR] Unsupported operation: no content provider for %q on the simulated phone (it has content://settings/system|secure|global)\n", uri)
		return 1
	}
	ns := m[1]
	ph := c.phone()
	key := ""
	if where != "" {
		w := whereName().FindStringSubmatch(where)
		if w == nil {
			return c.fail(1, "[ERROR] Unsupported where clause %q: use name='KEY'", where)
		}
		key = w[1]
	}
	switch a[0] {
	case "insert", "update":
		name := binds["name"]
		if name == "" {
			name = key
		}
		if name == "" || binds["value"] == "" && a[0] == "insert" {
			return c.fail(1, "[ERROR] Bindings name and value are required")
		}
		ph.PutSetting(ns, name, binds["value"])
	case "delete":
		if key == "" {
			return c.fail(1, "[ERROR] --where name='KEY' is required")
		}
		ph.DeleteSetting(ns, key)
	case "query":
		all := ph.Settings(ns)
		cols := []string{"_id", "name", "value"}
		if projection != "" {
			cols = strings.Split(projection, ":")
		}
		row := 0
		for i, k := range slices.Sorted(maps.Keys(all)) {
			if key != "" && k != key {
				continue
			}
			vals := map[string]string{"_id": strconv.Itoa(i + 1), "name": k, "value": all[k]}
			var f []string
			for _, col := range cols {
				v, ok := vals[col]
				if !ok {
					v = "NULL"
				}
				f = append(f, col+"="+v)
			}
			c.printf("Row: %d %s\n", row, strings.Join(f, ", "))
			row++
		}
		if row == 0 {
			c.printf("No result found.\n")
		}
	default:
		return c.fail(1, "[ERROR] Unsupported operation: %s", a[0])
	}
	return 0
}
