package adb

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/adb/proto"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func FuzzParseDevices(f *testing.F) {
	f.Add("emulator-5554 device product:p model:m device:d transport_id:1\n")
	f.Add("X no permissions (udev); see [http://x] usb:1-2\nY offline\n")
	f.Add("lonely\n")
	f.Fuzz(func(t *testing.T, s string) {
		devs, err := ParseDevices(s)
		if err != nil {
			return
		}
		for _, d := range devs {
			if d.Serial == "" || d.State == "" || strings.ContainsAny(d.Serial, " \t\n") {
				t.Fatalf("parsed %q into %+v", s, d)
			}
			d.Hint()
		}
	})
}

func FuzzReadReply(f *testing.F) {
	f.Add([]byte("OKAY0004abcd"))
	f.Add([]byte("FAIL0010device not found"))
	f.Add([]byte("FAILzzzz"))
	f.Add([]byte("OKAY"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		if err := readStatus(r, "host:x"); err != nil {
			return
		}
		s, err := readHexString(r)
		if err == nil && len(s) > maxReply {
			t.Fatalf("reply of %d bytes", len(s))
		}
		ParseDevices(s)
	})
}

// replayTransport answers every Open with a stream that reads canned bytes
// and swallows writes: the device's half of a sync exchange.
type replayTransport struct {
	data     []byte
	features []string
}

type replayStream struct{ io.Reader }

func (replayStream) Write(p []byte) (int, error) { return len(p), nil }
func (replayStream) Close() error                { return nil }

func (r replayTransport) Open(context.Context, string) (Stream, error) {
	return replayStream{bytes.NewReader(r.data)}, nil
}
func (r replayTransport) Features(context.Context) ([]string, error) { return r.features, nil }
func (r replayTransport) Serial() string                             { return "replay" }

func FuzzSyncReplies(f *testing.F) {
	f.Add(proto.AppendSyncDone(proto.AppendSyncData(nil, []byte("hi")), 0), false)
	f.Add(proto.AppendStatV2(nil, proto.SyncSTA2, proto.SyncStat{Mode: 0o100644, Size: 3}), true)
	f.Add(proto.AppendDentV2Done(proto.AppendDentV2(nil, proto.SyncDent{Name: "a"})), true)
	f.Add(proto.AppendDentV1Done(proto.AppendDentV1(nil, proto.SyncDent{Name: "b"})), false)
	f.Add(proto.AppendSyncFail(nil, "nope"), false)
	f.Add(proto.EncodeShell(proto.EncodeShell(nil, proto.ShellStdout, []byte("x")), proto.ShellExit, []byte{1}), true)
	f.Fuzz(func(t *testing.T, in []byte, v2 bool) {
		var fs []string
		if v2 {
			fs = []string{"shell_v2", "stat_v2", "ls_v2"}
		}
		tr := replayTransport{data: in, features: fs}
		ctx := context.Background()
		Stat(ctx, tr, "/x")
		List(ctx, tr, "/x")
		Pull(ctx, tr, "/x", io.Discard)
		Push(ctx, tr, strings.NewReader("data"), "/x", 0o644, time.Unix(1, 0))
		Shell(ctx, tr, "true")
	})
}
