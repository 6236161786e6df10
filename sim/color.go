package sim

import (
	"fmt"
	"image/color"
	"strconv"
	"strings"
)

// parseColor reads #RRGGBB or #AARRGGBB.
func parseColor(s string) (color.RGBA, error) {
	h := strings.TrimPrefix(s, "#")
	if len(s) == len(h) || (len(h) != 6 && len(h) != 8) {
		return color.RGBA{}, fmt.Errorf("expected a colour like #1E88E5, got %q", s)
	}
	n, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return color.RGBA{}, fmt.Errorf("expected a colour like #1E88E5, got %q", s)
	}
	c := color.RGBA{uint8(n >> 16), uint8(n >> 8), uint8(n), 255}
	if len(h) == 8 {
		c.A = uint8(n >> 24)
	}
	return c, nil
}
