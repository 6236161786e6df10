// Package lazy builds package-level values on first use instead of at
// program start: every command links every package, so what a package
// builds at init, each `apex version` pays for.
package lazy

import (
	"regexp"
	"sync"
)

// Regexp returns a function that compiles expr on its first call and
// returns the same *regexp.Regexp ever after. Like regexp.MustCompile, it
// panics when expr does not compile (the package's tests run it).
func Regexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
