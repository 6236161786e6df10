package sim

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"sync"
)

//go:embed apps/*.yaml
var builtinFS embed.FS

// builtinOrder puts the launcher icons in a familiar order.
var builtinOrder = []string{Launcher, "com.android.settings", "com.apex.shop", "com.apex.notes", "com.apex.login", "com.apex.zhongwen", "com.android.browser"}

var builtins = sync.OnceValues(func() ([]*AppSpec, error) {
	names, err := fs.Glob(builtinFS, "apps/*.yaml")
	if err != nil {
		return nil, err
	}
	var specs []*AppSpec
	for _, n := range names {
		data, err := builtinFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		s, err := ParseApp(data, n)
		if err != nil {
			return nil, fmt.Errorf("sim: built-in app: %w", err)
		}
		specs = append(specs, s)
	}
	slices.SortStableFunc(specs, func(a, b *AppSpec) int {
		ia, ib := slices.Index(builtinOrder, a.Package), slices.Index(builtinOrder, b.Package)
		if ia < 0 {
			ia = len(builtinOrder)
		}
		if ib < 0 {
			ib = len(builtinOrder)
		}
		return ia - ib
	})
	return specs, nil
})

// BuiltinApps returns the apps shipped in the binary: the launcher,
// Settings, Shop, Notes, Login and the Chinese shopping list (com.apex.zhongwen).
// Specs are shared and must not be modified.
func BuiltinApps() []*AppSpec {
	specs, err := builtins()
	if err != nil {
		// The specs are embedded and tested; a failure is a build defect.
		panic(err)
	}
	return slices.Clone(specs)
}
