package proto

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMessageRoundTrip(t *testing.T) {
	msgs := []Message{
		{Command: CmdCNXN, Arg0: Version, Arg1: MaxPayload, Data: []byte("host::features=shell_v2")},
		{Command: CmdOKAY, Arg0: 1, Arg1: 7},
		{Command: CmdWRTE, Arg0: 3, Arg1: 9, Data: bytes.Repeat([]byte{0xff}, 4096)},
	}
	var buf bytes.Buffer
	for _, m := range msgs {
		if err := WriteMessage(&buf, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range msgs {
		got, err := ReadMessage(&buf, 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestReadMessageRejects(t *testing.T) {
	good := Message{Command: CmdWRTE, Arg0: 1, Arg1: 2, Data: []byte("hello")}.Encode(nil)
	tests := map[string][]byte{
		"bad magic":   append(append([]byte{}, good[:20]...), append([]byte{0, 0, 0, 0}, good[24:]...)...),
		"too long":    Message{Command: CmdWRTE, Data: make([]byte, 100)}.Encode(nil),
		"truncated":   good[:len(good)-2],
		"unknown cmd": Message{Command: 0x41414141}.Encode(nil),
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ReadMessage(bytes.NewReader(in), 64)
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("ReadMessage = %v; want ErrBadMessage", err)
			}
		})
	}
}

func TestBanner(t *testing.T) {
	b, err := ParseBanner("device::ro.product.name=apex;ro.product.model=Apex Phone;ro.product.device=sim;features=shell_v2,cmd\x00")
	if err != nil {
		t.Fatal(err)
	}
	if b.Kind != "device" || b.Props["ro.product.model"] != "Apex Phone" || !b.Has("shell_v2") || b.Has("abb") {
		t.Fatalf("ParseBanner = %+v", b)
	}
	again, err := ParseBanner(b.String())
	if err != nil || !cmp.Equal(b, again) {
		t.Fatalf("banner round trip: %+v vs %+v (%v)", b, again, err)
	}
}

func TestShellPacket(t *testing.T) {
	wire := EncodeShell(EncodeShell(nil, ShellStdout, []byte("hi\n")), ShellExit, []byte{3})
	r := bytes.NewReader(wire)
	p, err := ReadShell(r, 1024)
	if err != nil || p.ID != ShellStdout || string(p.Data) != "hi\n" {
		t.Fatalf("first packet = %+v, %v", p, err)
	}
	p, err = ReadShell(r, 1024)
	if err != nil || p.ID != ShellExit || p.Data[0] != 3 {
		t.Fatalf("exit packet = %+v, %v", p, err)
	}
	if _, err := ReadShell(r, 1024); err != io.EOF {
		t.Fatalf("after last packet err = %v; want io.EOF", err)
	}
}

func FuzzReadMessage(f *testing.F) {
	f.Add(Message{Command: CmdCNXN, Arg0: Version, Arg1: MaxPayload, Data: []byte("host::")}.Encode(nil))
	f.Add([]byte("garbage that is not a frame at all"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			m, err := ReadMessage(r, 4096)
			if err != nil {
				return
			}
			if len(m.Data) > 4096 {
				t.Fatalf("payload %d bytes beyond limit", len(m.Data))
			}
		}
	})
}
