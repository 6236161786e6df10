//go:build race

package patience

const raceFactor = 4
