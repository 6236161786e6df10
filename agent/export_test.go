package agent

// RaceEnabled tells the external tests that the race detector is on.
const RaceEnabled = raceEnabled
