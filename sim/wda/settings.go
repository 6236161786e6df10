package wda

import "strings"

// The device settings WebDriverAgent can change on a simulator: the
// appearance and the simulated location.

func (s *Server) setAppearance(q *request) (any, error) {
	name, err := q.str("name")
	if err != nil {
		return nil, err
	}
	if name != "dark" && name != "light" {
		return nil, errInvalidArgument("The appearance %q is not known: use dark or light", name)
	}
	s.phone.SetNightMode(name == "dark")
	return nil, nil
}

func (s *Server) simulatedLocation(*request) (any, error) {
	lat, lon, ok := s.phone.Location()
	if !ok {
		return map[string]any{"latitude": nil, "longitude": nil, "altitude": nil}, nil
	}
	return map[string]any{"latitude": lat, "longitude": lon, "altitude": 0}, nil
}

func (s *Server) setSimulatedLocation(q *request) (any, error) {
	lat, err := q.num("latitude")
	if err != nil {
		return nil, err
	}
	lon, err := q.num("longitude")
	if err != nil {
		return nil, err
	}
	if lat < -90 || lat > 90 || lon < -180 || lon > 180 {
		return nil, errInvalidArgument("The location %g,%g is not valid: latitude -90 to 90, longitude -180 to 180", lat, lon)
	}
	s.phone.SetLocation(lat, lon)
	return nil, nil
}

func (s *Server) clearSimulatedLocation(*request) (any, error) {
	s.phone.ClearLocation()
	return nil, nil
}

// deviceInfo is /wda/device/info, following the phone's settings.
func (s *Server) deviceInfo(*request) (any, error) {
	style := "light"
	if s.phone.NightMode() {
		style = "dark"
	}
	props := s.phone.Props()
	return map[string]any{
		"name": s.phone.Model(), "model": "iPhone", "uuid": s.phone.Serial(), "userInterfaceIdiom": 0,
		"userInterfaceStyle": style, "timeZone": props["persist.sys.timezone"],
		"currentLocale": strings.ReplaceAll(props["persist.sys.locale"], "-", "_"), "isSimulator": true,
	}, nil
}

// batteryInfo is /wda/batteryInfo: level 0–1, state 2 charging or 1
// unplugged (UIDeviceBatteryState).
func (s *Server) batteryInfo(*request) (any, error) {
	level, charging := s.phone.Battery()
	state := 1
	if charging {
		state = 2
		if level == 100 {
			state = 3 // full
		}
	}
	return map[string]any{"level": float64(level) / 100, "state": state}, nil
}
