package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/artifact"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// TestAppsAreTheirProjects: project A's app is read by A's members (a
// viewer too, who uploads nothing) and by hosts of every project or of A,
// and by no one else — a tester of B, a host joined for B — through the
// store (resolve by name, hash or prefix; list; a cache's download) nor
// through a raw NATS connection; the store every project shared before
// is closed to all but an admin.
func TestAppsAreTheirProjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	const root = "the-admins-own-farm-token"
	p := farmtest.StartToken(ctx, t, root, 0)
	tokens := farmtest.Users(ctx, t, p, []string{"A", "B"},
		farmtest.Member{User: "alice", Role: auth.Tester, Projects: []string{"A"}},
		farmtest.Member{User: "bob", Role: auth.Tester, Projects: []string{"B"}},
		farmtest.Member{User: "vera", Role: auth.Viewer, Projects: []string{"A"}})
	_, adminJS := p.Conn()
	st, err := auth.Open(ctx, adminJS)
	if err != nil {
		t.Fatal(err)
	}
	if tokens["host of B"], err = st.CreateJoinToken(ctx, "root", "B"); err != nil {
		t.Fatal(err)
	}
	if tokens["host"], err = st.CreateJoinToken(ctx, "root"); err != nil {
		t.Fatal(err)
	}
	// An upgraded farm's shared store, with an app in it.
	shared, err := adminJS.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: artifact.SharedBucket})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shared.PutBytes(ctx, "sha256/old", []byte("an old app")); err != nil {
		t.Fatal(err)
	}

	stores := map[string]*artifact.Store{}
	for who, token := range tokens {
		nc, js, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: token})
		if err != nil {
			t.Fatalf("%s connects: %v", who, err)
		}
		defer nc.Close()
		stores[who] = artifact.New(js)
	}
	dir := t.TempDir()
	upload := func(who, project, pkg string) (artifact.Info, error) {
		file := filepath.Join(dir, pkg+".apk")
		if err := os.WriteFile(file, adbdtest.APK(t, pkg, pkg), 0o644); err != nil {
			t.Fatal(err)
		}
		uctx, ucancel := context.WithTimeout(ctx, patience.Of(20*time.Second))
		defer ucancel()
		info, _, err := stores[who].Upload(uctx, file, project, "")
		return info, err
	}
	a, err := upload("alice", "A", "com.acme.a")
	if err != nil {
		t.Fatalf("alice uploads into A: %v", err)
	}
	if _, err := upload("bob", "B", "com.acme.b"); err != nil {
		t.Fatalf("bob uploads into B: %v", err)
	}
	for _, tc := range []struct{ who, project string }{{"bob", "A"}, {"vera", "A"}, {"host", "A"}, {"host of B", "B"}} {
		if _, err := upload(tc.who, tc.project, "com.acme.x"); err == nil {
			t.Errorf("%s uploaded an app into %s", tc.who, tc.project)
		}
	}

	for _, tc := range []struct {
		who   string
		reads bool // A's app
	}{
		{"alice", true}, {"vera", true}, {"host", true},
		{"bob", false}, {"host of B", false},
	} {
		t.Run(tc.who, func(t *testing.T) {
			rctx, rcancel := context.WithTimeout(ctx, patience.Of(20*time.Second))
			defer rcancel()
			s := stores[tc.who]
			for _, ref := range []string{"com.acme.a.apk", a.Hash, a.Hash[:12]} {
				got, err := s.Resolve(rctx, "A", ref)
				if tc.reads && (err != nil || got.Hash != a.Hash) {
					t.Errorf("resolve %s in A: %+v, %v; want %s", ref, got, err, a.Hash)
				}
				if !tc.reads && err == nil {
					t.Errorf("resolved %s in A: %+v", ref, got)
				}
				if _, err := s.Resolve(rctx, "B", ref); err == nil {
					t.Errorf("A's %s resolved in B", ref)
				}
			}
			list, err := s.List(rctx, "A")
			if tc.reads && (err != nil || len(list) != 1) || !tc.reads && (err == nil || len(list) > 0) {
				t.Errorf("list A: %+v, %v; want listed=%v", list, err, tc.reads)
			}
			c, err := artifact.NewCache(s, t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			path, release, err := c.Fetch(rctx, a)
			if (err == nil) != tc.reads {
				t.Errorf("fetch A's app: %s, %v; want fetched=%v", path, err, tc.reads)
			}
			if err == nil {
				release()
			}
		})
	}

	// A raw connection with bob's token is refused each read and write of
	// A's store, and of the shared one.
	raw := farmtest.Dial(t, p, tokens["bob"])
	bucketA := artifact.Bucket("A")
	request := func(subject, body string) func() {
		return func() { raw.Request(subject, []byte(body), time.Second) }
	}
	for _, tc := range []struct {
		name, subject string
		do            func()
	}{
		{"open A's store", "$JS.API.STREAM.INFO.OBJ_" + bucketA, request("$JS.API.STREAM.INFO.OBJ_"+bucketA, "")},
		{"get A's app's info", "$JS.API.DIRECT.GET.OBJ_" + bucketA,
			request("$JS.API.DIRECT.GET.OBJ_"+bucketA+".$O."+bucketA+".M.c2hhMjU2Lw==", "")},
		{"read A's store", "$JS.API.STREAM.MSG.GET.OBJ_" + bucketA, request("$JS.API.STREAM.MSG.GET.OBJ_"+bucketA, `{"seq":1}`)},
		{"follow A's store", "$JS.API.CONSUMER.CREATE.OBJ_" + bucketA,
			request("$JS.API.CONSUMER.CREATE.OBJ_"+bucketA, `{"stream_name":"OBJ_`+bucketA+`","config":{}}`)},
		{"write into A's store", "$O." + bucketA + ".C.x", func() { raw.Publish("$O."+bucketA+".C.x", []byte("evil")) }},
		{"open the shared store", "$JS.API.STREAM.INFO.OBJ_" + artifact.SharedBucket,
			request("$JS.API.STREAM.INFO.OBJ_"+artifact.SharedBucket, "")},
		{"read the shared store", "$JS.API.STREAM.MSG.GET.OBJ_" + artifact.SharedBucket,
			request("$JS.API.STREAM.MSG.GET.OBJ_"+artifact.SharedBucket, `{"seq":1}`)},
	} {
		t.Run("raw "+tc.name, func(t *testing.T) {
			tc.do()
			raw.Refused(ctx, t, tc.subject)
		})
	}
}
