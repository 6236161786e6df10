package scene

import (
	"strconv"
	"strings"

	"github.com/apexagent/apex/internal/lazy"
)

var numberRE = lazy.Regexp(`-?\d[\d,]*(\.\d+)?`)

// FirstNumber reads the first number in an element's text: "Cart (3)" → 3,
// "$1,299.50" → 1299.5. Checks of numbers on screen (scripts' numberGreater,
// the agent's validator and queries) all read numbers this way.
func FirstNumber(text string) (float64, bool) {
	m := numberRE().FindString(text)
	if m == "" {
		return 0, false
	}
	n, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
	return n, err == nil
}
