package scene_test

import (
	"testing"

	"github.com/apexagent/apex/scene"
)

func TestFirstNumber(t *testing.T) {
	for text, want := range map[string]float64{"Cart (3)": 3, "$1,299.50": 1299.5, "-4 °C": -4, "Total: 12 items, 3 left": 12} {
		if got, ok := scene.FirstNumber(text); !ok || got != want {
			t.Errorf("FirstNumber(%q) = %v, %v; want %v", text, got, ok, want)
		}
	}
	for _, text := range []string{"", "no digits", "-"} {
		if got, ok := scene.FirstNumber(text); ok {
			t.Errorf("FirstNumber(%q) = %v; want none", text, got)
		}
	}
}
