// Command cpuhog keeps every core busy until it is killed or -for has
// passed: `make stress` runs the tests beside it, so a test that passes only
// on an idle machine fails there first.
package main

import (
	"flag"
	"runtime"
	"time"
)

func main() {
	d := flag.Duration("for", time.Hour, "how long to burn")
	n := flag.Int("n", runtime.NumCPU(), "busy goroutines (default: one per core)")
	flag.Parse()
	for range *n {
		go func() {
			x := uint64(1)
			for {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}()
	}
	time.Sleep(*d)
}
