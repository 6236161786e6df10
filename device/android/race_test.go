//go:build race

package android_test

// raceSlowdown stretches the deadlines of tests that time real work: the
// race detector makes it 5–10 times slower.
const raceSlowdown = 4
