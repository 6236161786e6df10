//go:build race

package lab_test

// raceEnabled: the race detector makes drawing and PNG decoding ~10×
// slower, so TestPolledPhones polls fewer phones for fewer rounds under it.
const raceEnabled = true
