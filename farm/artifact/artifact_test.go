package artifact_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/artifact"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

func TestKind(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"shop.apk", "apk"}, {"Shop.IPA", "ipa"}, {"Shop.app.zip", "app"}, {"shop.zip", ""}, {"shop.aab", ""}, {"shop", ""},
	} {
		got, err := artifact.Kind(tc.file)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("Kind(%q) = %q, %v; want %q", tc.file, got, err, tc.want)
		}
	}
}

// TestStoredOnceByHashAndNamed: the same content uploaded twice in a
// project (another name) is stored once there; names, hashes and hash
// prefixes resolve in their project only; a host's cache downloads each
// artifact once and drops the least recently used past its bound, never
// one in use.
func TestStoredOnceByHashAndNamed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := farmtest.Start(ctx, t, 0)
	_, js := p.Conn()
	s := artifact.New(js)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	notes := write("notes.apk", adbdtest.APK(t, "com.acme.notes", "Acme Notes"))
	a, existed, err := s.Upload(ctx, notes, "shop", "")
	if err != nil || existed {
		t.Fatalf("first upload: %+v existed=%v %v", a, existed, err)
	}
	copied := write("copy.apk", adbdtest.APK(t, "com.acme.notes", "Acme Notes"))
	b, existed, err := s.Upload(ctx, copied, "shop", "notes-1.2")
	if err != nil || !existed || b.Hash != a.Hash {
		t.Fatalf("same content again: %+v existed=%v %v; want stored once as %s", b, existed, err, a.Hash)
	}
	if c, existed, err := s.Upload(ctx, copied, "bank", "notes-bank"); err != nil || existed || c.Hash != a.Hash {
		t.Fatalf("same content in another project: %+v existed=%v %v; want stored anew there", c, existed, err)
	}
	if all, err := s.List(ctx, "shop"); err != nil || len(all) != 2 || all[0].Hash != a.Hash || all[1].Hash != a.Hash {
		t.Errorf("shop's artifacts: %+v %v; want one, named twice", all, err)
	}
	for _, tc := range []struct {
		project, ref string
		ok           bool
	}{
		{"shop", "notes.apk", true},
		{"shop", "notes-1.2", true},
		{"bank", "notes-bank", true},
		{"bank", "notes.apk", false}, // a name is its project's
		{"shop", a.Hash, true},
		{"shop", a.Hash[:12], true},
		{"shop", "0123456789ab", false},
		{"shop", "nothing", false},
		{"tools", a.Hash, false}, // a project with no store yet
		{"tools", "notes.apk", false},
	} {
		got, err := s.Resolve(ctx, tc.project, tc.ref)
		if tc.ok && (err != nil || got.Hash != a.Hash || got.Kind != "apk") {
			t.Errorf("Resolve(%s, %s) = %+v, %v; want %s", tc.project, tc.ref, got, err, a.Hash)
		}
		if !tc.ok && !errors.Is(err, artifact.ErrNotFound) {
			t.Errorf("Resolve(%s, %s) = %+v, %v; want ErrNotFound", tc.project, tc.ref, got, err)
		}
	}
	// A farm upgraded from one shared store finds none of its apps: the
	// refusal says so.
	if _, err := s.Resolve(ctx, "shop", "from-before.apk"); err == nil || !strings.Contains(err.Error(), "upload them again") {
		t.Errorf("an app from before: %v, want told to upload it again", err)
	}
	if _, _, err := s.Upload(ctx, write("notes.txt", []byte("x")), "shop", ""); err == nil {
		t.Error("a .txt was stored as an app")
	}

	// The cache: room for two of these APKs.
	var infos []artifact.Info
	for _, pkg := range []string{"com.acme.a", "com.acme.b", "com.acme.c"} {
		i, _, err := s.Upload(ctx, write(pkg+".apk", adbdtest.APK(t, pkg, pkg)), "shop", "")
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, i)
	}
	c, err := artifact.NewCache(s, filepath.Join(dir, "cache"), int64(2*infos[0].Size+infos[0].Size/2))
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(i artifact.Info) (string, func()) {
		t.Helper()
		path, release, err := c.Fetch(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		return path, release
	}
	pa, ra := fetch(infos[0])
	ra()
	_, rb := fetch(infos[1]) // b stays in use
	if again, r := fetch(infos[0]); again != pa || c.Fetches() != 2 {
		t.Errorf("a second fetch of a: %s, %d downloads; want the cached file, 2 downloads", again, c.Fetches())
	} else {
		r()
	}
	_, rc := fetch(infos[2]) // over the bound
	rc()
	rb()
	present := func(i artifact.Info) bool {
		_, err := os.Stat(filepath.Join(dir, "cache", i.Hash+".apk"))
		return err == nil
	}
	// b is the least recently used but in use: a, the next, is dropped.
	if present(infos[0]) || !present(infos[1]) || !present(infos[2]) {
		t.Errorf("after c: a %v b %v c %v; want a dropped, b (in use) and c kept", present(infos[0]), present(infos[1]), present(infos[2]))
	}
	for _, bad := range []artifact.Info{{Hash: "zz", Kind: "apk", Project: "shop"}, {Hash: infos[1].Hash, Kind: "../apk", Project: "shop"}} {
		if _, _, err := c.Fetch(ctx, bad); err == nil {
			t.Errorf("a fetch of %+v went ahead", bad)
		}
	}
}
