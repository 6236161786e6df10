package action

import (
	"encoding/json"
)

// scalarParam is the param a bare value stands for when an action is
// given one instead of an object (Midscene's `Launch: com.apex.shop`,
// `Tap: Settings`): the first locator param, or else the only required
// param; "" when the action has no such param.
func (a *Action) scalarParam() string {
	if fs := a.LocatorFields(); len(fs) > 0 {
		return fs[0]
	}
	var sc struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(a.SchemaJSON(), &sc) == nil && len(sc.Required) == 1 {
		return sc.Required[0]
	}
	return ""
}

// objectOfScalar wraps a bare JSON value (a string, a number) as the
// params object of the param it stands for; other input is returned as is.
func (a *Action) objectOfScalar(raw []byte) []byte {
	if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' || string(raw) == "null" || !json.Valid(raw) {
		return raw
	}
	name := a.scalarParam()
	if name == "" {
		return raw
	}
	out, err := json.Marshal(map[string]json.RawMessage{name: raw})
	if err != nil {
		return raw
	}
	return out
}
