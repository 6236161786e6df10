// Package action is Apex's action space: every action a model, a script or
// a person can take on a device, each declared once with Define. From that
// one declaration come the JSON Schema of its params, their validation, the
// list of params that must be found on screen (locators), the text that tells
// a model what it can do, and tool definitions. It is the only package that
// calls a device.Driver's input methods.
//
// The action names are stable: scripts, recorded runs, caches and model
// prompts refer to them. Lookup ignores case, spaces, "-" and "_", and also
// accepts the aliases in brackets (Midscene's names).
//
//	Common (every platform)
//	  Tap(locate)                          tap once
//	  DoubleTap(locate)                    tap twice quickly
//	  LongPress(locate, duration?)         [AndroidLongPress] press and hold, 1000 ms by default
//	  Input(value, locate?, mode?)         type; mode replace (default) | append | clear
//	  ClearInput(locate?)                  empty a field
//	  Scroll(direction?, distance?, locate?, untilVisible?)
//	                                       swipe to reveal content; untilVisible scrolls at most
//	                                       maxScrolls (10) times until the Resolver finds it
//	  Swipe(from|start, to|end, duration?) swipe between elements or points
//	  DragAndDrop(from, to, duration?)     slow swipe from one element onto another
//	  KeyboardPress(keyName, locate?)      a key, by any name device.ParseKey reads
//	  Launch(app), Terminate(app)          start / force-stop by package or bundle id
//	  Sleep(ms)                            wait, ending early when the context ends
//	Android
//	  Back [AndroidBackButton], Home [AndroidHomeButton], RecentApps [AndroidRecentAppsButton],
//	  PullGesture(direction, locate?, distance?) [AndroidPull]
//	iOS
//	  Home [IOSHomeButton], AppSwitcher [IOSAppSwitcher]
//	Settings (both platforms; marked with AsSetting, each answers with the value read back)
//	  SetAppearance(appearance), SetLocale(locale), SetFontScale(scale), SetRotation(rotation),
//	  SetLocation(lat, lon), SetWiFi(on), SetMobileData(on), SetAirplaneMode(on),
//	  SetAnimations(on), SetTimeZone(timeZone), SetBattery(level, charging?)
//	                                       a driver without device.Configurator, or a
//	                                       platform that cannot change one, refuses with why
//
// Each declaration also says its Effect: whether running the action again
// leaves the state one run left (Idempotent: Launch, Terminate, Home, Sleep,
// ClearInput, Input replacing or clearing, Scroll untilVisible) or adds to
// it (Cumulative: taps, presses, keys, swipes, Input appending, Scroll by a
// distance). Retries repeat a Cumulative action only with evidence that the
// first run did nothing.
//
// Params are JSON objects with lowerCamel keys. A locator param is a string
// (a description of the element) or an object {prompt,text,id,desc,type,
// index}; see Locator.
package action
