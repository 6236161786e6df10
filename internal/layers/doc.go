// Package layers holds the test that enforces Apex's layers
// (docs/architecture.md): every package of the module has a place in the
// table, and no package imports one of a higher layer.
package layers
