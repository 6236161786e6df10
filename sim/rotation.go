package sim

import (
	"fmt"
	"strconv"
)

// Rotation returns the display's rotation: 0 (portrait), 1 (landscape,
// turned left), 2 (upside down) or 3 (landscape, turned right), as
// Surface.ROTATION_* and `dumpsys input`'s SurfaceOrientation.
func (p *Phone) Rotation() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rotation
}

// SetRotation locks the display in a rotation, as `settings put system
// user_rotation N` with auto-rotate off does; the screen re-lays out.
func (p *Phone) SetRotation(r int) error {
	if r < 0 || r > 3 {
		return fmt.Errorf("sim: rotation %d: want 0, 1, 2 or 3", r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settings["system"]["accelerometer_rotation"] = "0"
	p.settings["system"]["user_rotation"] = strconv.Itoa(r)
	p.applyRotation()
	return nil
}

// applyRotation follows the settings: with auto-rotate on, the phone (which
// has no tilt sensor and lies upright) shows portrait; with it off, the
// user's rotation.
func (p *Phone) applyRotation() {
	r := 0
	if p.settings["system"]["accelerometer_rotation"] != "1" {
		n, err := strconv.Atoi(p.settings["system"]["user_rotation"])
		if err == nil && n >= 0 && n <= 3 {
			r = n
		}
	}
	if r == p.rotation {
		return
	}
	p.rotation = r
	p.w, p.h = p.natW, p.natH
	if r%2 == 1 {
		p.w, p.h = p.natH, p.natW
	}
	for _, a := range p.apps {
		clear(a.scroll)
	}
	p.logcat.add(1000, "I", "WindowManager", fmt.Sprintf("Rotation changed to %d", r))
	p.changed()
}
