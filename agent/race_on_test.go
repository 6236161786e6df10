//go:build race

package agent

// raceEnabled: the race detector makes tokenizing ~10× slower, so the
// corpus budget test samples screens under it (every screen otherwise).
const raceEnabled = true
