package host

import (
	"errors"
	"strings"
	"testing"

	"github.com/apexagent/apex/device"
)

// TestInstallable: an Android device installs APKs only; a farm iPhone
// installs nothing, and the refusal names what is missing.
func TestInstallable(t *testing.T) {
	tests := []struct {
		platform string
		files    []string
		want     string // in the error; "" for none
	}{
		{"android", []string{"/c/a.apk", "/c/b.apk"}, ""},
		{"android", nil, ""},
		{"ios", nil, ""},
		{"android", []string{"/c/a.apk", "/c/shop.ipa"}, "shop.ipa is an iOS app (ipa): android devices install APKs"},
		{"ios", []string{"/c/a.apk"}, "a.apk is an Android app"},
		{"ios", []string{"/c/shop.ipa"}, "WebDriverAgent, which cannot install apps"},
		{"ios", []string{"/c/shop.app"}, "ideviceinstaller"},
	}
	for _, tt := range tests {
		err := installable(tt.platform, tt.files)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("installable(%s, %v) = %v, want %q", tt.platform, tt.files, err, tt.want)
		}
	}
	if err := installable("ios", []string{"x.ipa"}); !errors.Is(err, device.ErrUnsupported) {
		t.Errorf("an IPA on an iPhone: %v, want ErrUnsupported", err)
	}
}
