package adbd

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"

	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// axmlAttr is an attribute of the binary XML the encoder below writes:
// a string value, or a boolean when str is "" and isBool is set.
type axmlAttr struct {
	name, str string
	isBool    bool
	b         bool
}

type axmlElem struct {
	name  string
	attrs []axmlAttr
	kids  []axmlElem
}

// encodeAXML writes Android's compiled XML format (what aapt puts in an
// APK), so the parser is tested on the real layout.
func encodeAXML(root axmlElem) []byte {
	var pool []string
	idx := map[string]uint32{}
	intern := func(s string) uint32 {
		if i, ok := idx[s]; ok {
			return i
		}
		idx[s] = uint32(len(pool))
		pool = append(pool, s)
		return idx[s]
	}
	le := binary.LittleEndian
	var body []byte
	var walk func(e axmlElem)
	walk = func(e axmlElem) {
		start := make([]byte, 36+20*len(e.attrs))
		le.PutUint16(start[0:], axmlStartElement)
		le.PutUint16(start[2:], 16)
		le.PutUint32(start[4:], uint32(len(start)))
		le.PutUint32(start[12:], 0xffffffff)
		le.PutUint32(start[16:], 0xffffffff)
		le.PutUint32(start[20:], intern(e.name))
		le.PutUint16(start[24:], 20)
		le.PutUint16(start[26:], 20)
		le.PutUint16(start[28:], uint16(len(e.attrs)))
		for i, a := range e.attrs {
			o := 36 + 20*i
			le.PutUint32(start[o:], 0xffffffff)
			le.PutUint32(start[o+4:], intern(a.name))
			le.PutUint16(start[o+12:], 8)
			if a.isBool {
				le.PutUint32(start[o+8:], 0xffffffff)
				start[o+15] = axmlTypeBool
				if a.b {
					le.PutUint32(start[o+16:], 0xffffffff)
				}
			} else {
				le.PutUint32(start[o+8:], intern(a.str))
				start[o+15] = axmlTypeString
				le.PutUint32(start[o+16:], intern(a.str))
			}
		}
		body = append(body, start...)
		for _, k := range e.kids {
			walk(k)
		}
		end := make([]byte, 24)
		le.PutUint16(end[0:], axmlEndElement)
		le.PutUint16(end[2:], 16)
		le.PutUint32(end[4:], 24)
		le.PutUint32(end[12:], 0xffffffff)
		le.PutUint32(end[16:], 0xffffffff)
		le.PutUint32(end[20:], intern(e.name))
		body = append(body, end...)
	}
	walk(root)
	var strs []byte
	offsets := make([]byte, 4*len(pool))
	for i, s := range pool {
		le.PutUint32(offsets[4*i:], uint32(len(strs)))
		u := utf16.Encode([]rune(s))
		strs = le.AppendUint16(strs, uint16(len(u)))
		for _, c := range u {
			strs = le.AppendUint16(strs, c)
		}
		strs = le.AppendUint16(strs, 0)
	}
	for len(strs)%4 != 0 {
		strs = append(strs, 0)
	}
	sp := make([]byte, 28)
	le.PutUint16(sp[0:], axmlStringPool)
	le.PutUint16(sp[2:], 28)
	le.PutUint32(sp[4:], uint32(28+len(offsets)+len(strs)))
	le.PutUint32(sp[8:], uint32(len(pool)))
	le.PutUint32(sp[20:], uint32(28+len(offsets)))
	sp = append(append(sp, offsets...), strs...)
	file := make([]byte, 8)
	le.PutUint16(file[0:], axmlFileType)
	le.PutUint16(file[2:], 8)
	file = append(append(file, sp...), body...)
	le.PutUint32(file[4:], uint32(len(file)))
	return file
}

func axmlSample() []byte {
	return encodeAXML(axmlElem{name: "manifest", attrs: []axmlAttr{{name: "package", str: "com.example.bin"}, {name: "versionName", str: "3.1"}},
		kids: []axmlElem{{name: "application", attrs: []axmlAttr{{name: "label", str: "二进制"}, {name: "debuggable", isBool: true, b: true}},
			kids: []axmlElem{
				{name: "activity", attrs: []axmlAttr{{name: "name", str: ".Settings"}}},
				{name: "activity", attrs: []axmlAttr{{name: "name", str: "com.example.bin.Main"}}, kids: []axmlElem{
					{name: "intent-filter", kids: []axmlElem{
						{name: "action", attrs: []axmlAttr{{name: "name", str: "android.intent.action.MAIN"}}},
						{name: "category", attrs: []axmlAttr{{name: "name", str: "android.intent.category.LAUNCHER"}}},
					}}}},
			}}}})
}

func zipWith(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create(name)
	w.Write(data)
	zw.Close()
	return b.Bytes()
}

func TestParseAPK(t *testing.T) {
	tests := map[string]struct {
		apk  []byte
		want Package
	}{
		"binary manifest": {zipWith(t, "AndroidManifest.xml", axmlSample()),
			Package{Name: "com.example.bin", Label: "二进制", Version: "3.1", LauncherActivity: "com.example.bin.Main", Debuggable: true}},
		"text manifest": {adbdtest.APK(t, "org.example.txt", "Text"),
			Package{Name: "org.example.txt", Label: "Text", Version: "1.2", LauncherActivity: ".MainActivity"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseAPK(tt.apk)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAPK (-want +got):\n%s", diff)
			}
		})
	}
	for name, apk := range map[string][]byte{
		"not a zip":   []byte("hello"),
		"no manifest": zipWith(t, "classes.dex", []byte("dex")),
		"no package":  zipWith(t, "AndroidManifest.xml", []byte(`<manifest><application/></manifest>`)),
		"truncated":   zipWith(t, "AndroidManifest.xml", axmlSample()[:100]),
	} {
		t.Run(name, func(t *testing.T) {
			if p, err := ParseAPK(apk); err == nil {
				t.Fatalf("ParseAPK = %+v; want an error", p)
			}
		})
	}
}
