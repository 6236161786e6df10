package adbdtest

import (
	"archive/zip"
	"bytes"
	"testing"
)

// APK builds a minimal APK the simulated phone installs: a zip with a text
// AndroidManifest.xml declaring pkg, labelled label, with a launcher
// activity.
func APK(t testing.TB, pkg, label string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("AndroidManifest.xml")
	w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="` + pkg + `" android:versionName="1.2">
  <application android:label="` + label + `">
    <activity android:name=".MainActivity" android:exported="true">
      <intent-filter>
        <action android:name="android.intent.action.MAIN"/>
        <category android:name="android.intent.category.LAUNCHER"/>
      </intent-filter>
    </activity>
  </application>
</manifest>`))
	w, _ = zw.Create("classes.dex")
	w.Write(make([]byte, 1024))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
