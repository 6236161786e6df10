package wda

import (
	"net/http"
	"strings"
)

type routeEntry struct {
	method string
	segs   []string // ":name" matches one segment
	h      handler
}

// routes lists the commands. Each answers both sessionless and under
// /session/:id, as WebDriverAgent's routes without a session requirement
// do; a stale session id is refused before routing.
var routes = build([]struct {
	method, pattern string
	h               handler
}{
	{"GET", "/status", (*Server).status},
	{"GET", "/wda/healthcheck", func(*Server, *request) (any, error) { return nil, nil }},
	{"POST", "/session", (*Server).newSession},
	{"GET", "/source", (*Server).source},
	{"GET", "/screenshot", (*Server).screenshot},
	{"GET", "/window/size", (*Server).windowSize},
	{"GET", "/window/rect", (*Server).windowRect},
	{"GET", "/wda/screen", (*Server).screen},
	{"GET", "/orientation", (*Server).orientation},
	{"POST", "/orientation", (*Server).setOrientation},
	{"GET", "/rotation", (*Server).rotation},
	{"POST", "/rotation", (*Server).setRotation},
	{"POST", "/timeouts", (*Server).timeouts},
	// One native context and one window: what Appium clients ask first.
	{"GET", "/context", func(*Server, *request) (any, error) { return "NATIVE_APP", nil }},
	{"GET", "/contexts", func(*Server, *request) (any, error) { return []string{"NATIVE_APP"}, nil }},
	{"GET", "/window", func(*Server, *request) (any, error) { return "NATIVE_APP", nil }},
	{"GET", "/window/handles", func(*Server, *request) (any, error) { return []string{"NATIVE_APP"}, nil }},
	{"GET", "/appium/settings", (*Server).settings},
	{"POST", "/appium/settings", (*Server).updateSettings},
	{"GET", "/wda/batteryInfo", (*Server).batteryInfo},
	{"POST", "/wda/setPasteboard", (*Server).setPasteboard},
	{"POST", "/wda/getPasteboard", (*Server).getPasteboard},
	{"GET", "/wda/apps/list", (*Server).appsList},
	{"POST", "/url", (*Server).openURL},
	{"POST", "/wda/deactivateApp", (*Server).deactivateApp},
	{"GET", "/element/:uuid/screenshot", (*Server).elementScreenshot},
	{"GET", "/wda/device/info", (*Server).deviceInfo},
	{"POST", "/wda/device/appearance", (*Server).setAppearance},
	{"GET", "/wda/simulatedLocation", (*Server).simulatedLocation},
	{"POST", "/wda/simulatedLocation", (*Server).setSimulatedLocation},
	{"DELETE", "/wda/simulatedLocation", (*Server).clearSimulatedLocation},

	{"POST", "/element", (*Server).findElement},
	{"POST", "/elements", (*Server).findElements},
	{"GET", "/element/active", (*Server).activeElement},
	{"POST", "/element/:uuid/element", (*Server).findElement},
	{"POST", "/element/:uuid/elements", (*Server).findElements},
	{"GET", "/element/:uuid/rect", (*Server).elementRect},
	{"GET", "/element/:uuid/text", (*Server).elementText},
	{"GET", "/element/:uuid/name", (*Server).elementType},
	{"GET", "/element/:uuid/enabled", (*Server).elementEnabled},
	{"GET", "/element/:uuid/displayed", (*Server).elementDisplayed},
	{"GET", "/element/:uuid/selected", (*Server).elementSelected},
	{"GET", "/element/:uuid/attribute/:name", (*Server).elementAttribute},
	{"POST", "/element/:uuid/click", (*Server).elementClick},
	{"POST", "/element/:uuid/value", (*Server).elementValue},
	{"POST", "/element/:uuid/clear", (*Server).elementClear},
	{"POST", "/wda/element/:uuid/touchAndHold", (*Server).elementTouchAndHold},
	{"POST", "/wda/element/:uuid/swipe", (*Server).elementSwipe},
	{"POST", "/wda/element/:uuid/scroll", (*Server).elementScroll},
	{"POST", "/wda/element/:uuid/pinch", (*Server).elementPinch},

	{"POST", "/wda/tap/:uuid", (*Server).tapLegacy},
	{"POST", "/wda/tap", (*Server).tap},
	{"POST", "/wda/doubleTap", (*Server).doubleTap},
	{"POST", "/wda/touchAndHold", (*Server).touchAndHold},
	{"POST", "/wda/dragfromtoforduration", (*Server).drag},
	{"POST", "/actions", (*Server).actions},
	{"DELETE", "/actions", func(*Server, *request) (any, error) { return nil, nil }},
	{"POST", "/wda/touch/perform", (*Server).touchPerform},
	{"POST", "/wda/touch/multi/perform", (*Server).multiTouchPerform},

	{"POST", "/wda/keys", (*Server).keys},
	{"POST", "/wda/keyboard/dismiss", (*Server).dismissKeyboard},
	{"POST", "/wda/pressButton", (*Server).pressButton},
	{"POST", "/wda/homescreen", (*Server).homescreen},
	{"POST", "/wda/lock", (*Server).lock},
	{"POST", "/wda/unlock", (*Server).unlock},
	{"GET", "/wda/locked", (*Server).locked},

	{"POST", "/wda/apps/launch", (*Server).appLaunch},
	{"POST", "/wda/apps/activate", (*Server).appActivate},
	{"POST", "/wda/apps/terminate", (*Server).appTerminate},
	{"POST", "/wda/apps/state", (*Server).appState},
	{"GET", "/wda/activeAppInfo", (*Server).activeAppInfo},

	{"GET", "/alert/text", (*Server).alertText},
	{"POST", "/alert/accept", (*Server).alertAccept},
	{"POST", "/alert/dismiss", (*Server).alertDismiss},
	{"GET", "/wda/alert/buttons", (*Server).alertButtons},
})

func build(defs []struct {
	method, pattern string
	h               handler
}) []routeEntry {
	out := make([]routeEntry, 0, len(defs))
	for _, d := range defs {
		out = append(out, routeEntry{method: d.method, segs: strings.Split(strings.TrimPrefix(d.pattern, "/"), "/"), h: d.h})
	}
	return out
}

// route finds the handler of method and path and the path's parameters.
func route(method, path string) (handler, map[string]string) {
	if method == http.MethodHead {
		method = http.MethodGet
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, rt := range routes {
		if rt.method != method || len(rt.segs) != len(segs) {
			continue
		}
		var params map[string]string
		ok := true
		for i, p := range rt.segs {
			if strings.HasPrefix(p, ":") {
				if segs[i] == "" {
					ok = false
					break
				}
				if params == nil {
					params = map[string]string{}
				}
				params[p[1:]] = segs[i]
			} else if p != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return rt.h, params
		}
	}
	return nil, nil
}
