package adbd

import (
	"strconv"
	"strings"
)

// keyCodes maps Android KeyEvent names (without the KEYCODE_ prefix) to
// their codes, for `input keyevent NAME`.
var keyCodes = map[string]int{
	"UNKNOWN": 0, "SOFT_LEFT": 1, "SOFT_RIGHT": 2, "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6,
	"STAR": 17, "POUND": 18, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22,
	"DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27, "CLEAR": 28,
	"COMMA": 55, "PERIOD": 56, "ALT_LEFT": 57, "ALT_RIGHT": 58, "SHIFT_LEFT": 59, "SHIFT_RIGHT": 60,
	"TAB": 61, "SPACE": 62, "SYM": 63, "EXPLORER": 64, "ENVELOPE": 65, "ENTER": 66, "DEL": 67,
	"GRAVE": 68, "MINUS": 69, "EQUALS": 70, "LEFT_BRACKET": 71, "RIGHT_BRACKET": 72, "BACKSLASH": 73,
	"SEMICOLON": 74, "APOSTROPHE": 75, "SLASH": 76, "AT": 77, "NUM": 78, "HEADSETHOOK": 79, "FOCUS": 80,
	"PLUS": 81, "MENU": 82, "NOTIFICATION": 83, "SEARCH": 84, "MEDIA_PLAY_PAUSE": 85, "MEDIA_STOP": 86,
	"MEDIA_NEXT": 87, "MEDIA_PREVIOUS": 88, "MUTE": 91, "PAGE_UP": 92, "PAGE_DOWN": 93,
	"ESCAPE": 111, "FORWARD_DEL": 112, "CTRL_LEFT": 113, "CTRL_RIGHT": 114, "CAPS_LOCK": 115,
	"MOVE_HOME": 122, "MOVE_END": 123, "INSERT": 124, "FORWARD": 125, "VOLUME_MUTE": 164,
	"APP_SWITCH": 187, "LANGUAGE_SWITCH": 204, "SLEEP": 223, "WAKEUP": 224, "ASSIST": 219,
	"BRIGHTNESS_DOWN": 220, "BRIGHTNESS_UP": 221, "CUT": 277, "COPY": 278, "PASTE": 279,
	"ALL_APPS": 284,
}

func init() {
	for i := 0; i <= 9; i++ {
		keyCodes[strconv.Itoa(i)] = 7 + i
	}
	for c := 'A'; c <= 'Z'; c++ {
		keyCodes[string(c)] = 29 + int(c-'A')
	}
}

// keyCode resolves "KEYCODE_BACK", "BACK" or "4".
func keyCode(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n, true
	}
	code, ok := keyCodes[strings.TrimPrefix(strings.ToUpper(s), "KEYCODE_")]
	return code, ok
}

// keyChars are the characters of the typing keys with no modifier held
// (the virtual keyboard's key map).
var keyChars = map[int]rune{17: '*', 18: '#', 55: ',', 56: '.', 62: ' ', 68: '`', 69: '-', 70: '=',
	71: '[', 72: ']', 73: '\\', 74: ';', 75: '\'', 76: '/', 77: '@', 81: '+'}

// KeyChar returns the character a key code types: KEYCODE_0…9 (7–16),
// KEYCODE_A…Z (29–54, lower case), space and punctuation.
func KeyChar(code int) (rune, bool) {
	switch {
	case code >= 7 && code <= 16:
		return rune('0' + code - 7), true
	case code >= 29 && code <= 54:
		return rune('a' + code - 29), true
	}
	r, ok := keyChars[code]
	return r, ok
}
