package proto

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSyncRequestRoundTrip(t *testing.T) {
	var wire []byte
	reqs := []SyncRequest{{SyncSTA2, "/sdcard/a.txt"}, {SyncSEND, "/data/local/tmp/x,33188"}, {SyncLIS2, "/sdcard"}, {SyncQUIT, ""}}
	for _, r := range reqs {
		wire = AppendSyncRequest(wire, r.ID, r.Path)
	}
	rd := bytes.NewReader(wire)
	for _, want := range reqs {
		got, err := ReadSyncRequest(rd)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request (-want +got):\n%s", diff)
		}
	}
	if _, err := ReadSyncRequest(rd); err != io.EOF {
		t.Fatalf("after last request err = %v; want EOF", err)
	}
}

func TestSyncRequestRejects(t *testing.T) {
	for name, in := range map[string][]byte{
		"unknown id": AppendSyncRequest(nil, "ZZZZ", "/x"),
		"long path":  AppendSyncRequest(nil, SyncRECV, string(make([]byte, SyncMaxPath+1))),
		"truncated":  AppendSyncRequest(nil, SyncRECV, "/sdcard/file")[:10],
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadSyncRequest(bytes.NewReader(in)); !errors.Is(err, ErrBadMessage) {
				t.Fatalf("err = %v; want ErrBadMessage", err)
			}
		})
	}
}

func TestSyncStatAndDents(t *testing.T) {
	st := SyncStat{Mode: 0o100644, Nlink: 1, Size: 3 << 20, Mtime: 1700000000, Ino: 9}
	id, got, err := ReadStatV2(bytes.NewReader(AppendStatV2(nil, SyncLST2, st)))
	if err != nil || id != SyncLST2 || got != st {
		t.Fatalf("stat v2 = %s %+v %v", id, got, err)
	}
	m, s, mt, err := ReadStatV1(bytes.NewReader(AppendStatV1(nil, 0o40755, 4096, 17)))
	if err != nil || m != 0o40755 || s != 4096 || mt != 17 {
		t.Fatalf("stat v1 = %o %d %d %v", m, s, mt, err)
	}
	for _, v2 := range []bool{false, true} {
		d := SyncDent{Name: "photo.png", Stat: SyncStat{Mode: 0o100644, Size: 12, Mtime: 5}}
		var wire []byte
		if v2 {
			wire = AppendDentV2Done(AppendDentV2(nil, d))
		} else {
			wire = AppendDentV1Done(AppendDentV1(nil, d))
		}
		r := bytes.NewReader(wire)
		got, done, err := ReadDent(r, v2)
		if err != nil || done || got.Name != d.Name || got.Stat.Size != 12 || got.Stat.Mode != d.Stat.Mode {
			t.Fatalf("v2=%v dent = %+v %v %v", v2, got, done, err)
		}
		if _, done, err := ReadDent(r, v2); !done || err != nil || r.Len() != 0 {
			t.Fatalf("v2=%v DONE: done=%v err=%v left=%d", v2, done, err, r.Len())
		}
	}
}

func TestSyncPackets(t *testing.T) {
	wire := AppendSyncData(nil, []byte("hello"))
	wire = AppendSyncDone(wire, 99)
	wire = AppendSyncFail(wire, "no such file")
	wire = AppendSyncOkay(wire)
	r := bytes.NewReader(wire)
	want := []SyncPacket{{SyncDATA, 5, []byte("hello")}, {SyncDONE, 99, nil}, {SyncFAIL, 12, []byte("no such file")}, {SyncOKAY, 0, nil}}
	for _, w := range want {
		p, err := ReadSyncPacket(r, 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(w, p, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
			t.Errorf("packet (-want +got):\n%s", diff)
		}
	}
	if _, err := ReadSyncPacket(bytes.NewReader(AppendSyncData(nil, make([]byte, 100))), 64); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("oversized DATA err = %v", err)
	}
}

func FuzzReadSyncRequest(f *testing.F) {
	f.Add(AppendSyncRequest(AppendSyncRequest(nil, SyncSTA2, "/sdcard"), SyncQUIT, ""))
	f.Add(AppendSyncData(AppendSyncRequest(nil, SyncSEND, "/sdcard/f,420"), []byte("abc")))
	f.Add([]byte("STAT\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			req, err := ReadSyncRequest(r)
			if err != nil {
				return
			}
			if len(req.Path) > SyncMaxPath {
				t.Fatalf("path of %d bytes accepted", len(req.Path))
			}
			if req.ID == SyncSEND {
				if _, err := ReadSyncPacket(r, 0); err != nil {
					return
				}
			}
		}
	})
}
