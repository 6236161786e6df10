//go:build race

package sim

// raceEnabled: the race detector makes drawing ~10× slower, so
// TestScreenshotDamage takes fewer steps per app under it.
const raceEnabled = true
