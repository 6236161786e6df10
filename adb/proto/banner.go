package proto

import (
	"fmt"
	"sort"
	"strings"
)

// Banner is the identity string carried by CNXN:
// "device::ro.product.name=X;ro.product.model=Y;ro.product.device=Z;features=a,b".
type Banner struct {
	Kind     string            // "device" or "host"
	Serial   string            // usually empty
	Props    map[string]string // ro.product.* and others
	Features []string
}

// String encodes the banner as adb sends it.
func (b Banner) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s:%s:", b.Kind, b.Serial)
	keys := make([]string, 0, len(b.Props))
	for k := range b.Props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s=%s;", k, b.Props[k])
	}
	sb.WriteString("features=" + strings.Join(b.Features, ","))
	return sb.String()
}

// ParseBanner decodes a CNXN payload. Trailing NULs are ignored.
func ParseBanner(s string) (Banner, error) {
	s = strings.TrimRight(s, "\x00")
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Banner{}, fmt.Errorf("%w: banner %q has no kind", ErrBadMessage, s)
	}
	serial, props, ok := strings.Cut(rest, ":")
	if !ok {
		return Banner{}, fmt.Errorf("%w: banner %q has no serial field", ErrBadMessage, s)
	}
	b := Banner{Kind: kind, Serial: serial, Props: map[string]string{}}
	for _, kv := range strings.Split(props, ";") {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "":
		case k == "features":
			if v != "" {
				b.Features = strings.Split(v, ",")
			}
		default:
			b.Props[k] = v
		}
	}
	return b, nil
}

// Has reports whether the banner advertises a feature.
func (b Banner) Has(feature string) bool {
	for _, f := range b.Features {
		if f == feature {
			return true
		}
	}
	return false
}
