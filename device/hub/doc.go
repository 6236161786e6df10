// Package hub runs device hosts whose devices are sessions: hosts that boot
// devices on demand (simulated phones as processes, Android emulators where
// the SDK has them) and a session host that caps how many run and how long
// one may sit unused, records the sessions it started in a state directory,
// and stops those a crashed process left behind.
package hub
