package server

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A task's end is the last entry of its progress, in its view and on the
// stream: an entry that comes after the end (an event of a runtime still
// winding down) is dropped.
func TestTaskEndIsLastEntry(t *testing.T) {
	var b broker
	b.init()
	c, _ := b.subscribe()
	tk := &task{id: "t1", status: statusRunning}
	tk.add(&b, Progress{Type: "plan"})
	tk.add(&b, Progress{Type: "acted"})
	tk.end(&b, "failed", nil, errors.New("no such thing"))
	tk.add(&b, Progress{Type: "late"})

	type entry struct {
		Msg, Type, Status, Text string
		Seq                     int
	}
	want := []entry{
		{Msg: "progress", Type: "plan", Seq: 1},
		{Msg: "progress", Type: "acted", Seq: 2},
		{Msg: "task", Type: endType, Seq: 3, Status: "failed", Text: "no such thing"},
	}
	var streamed, viewed []entry
	for range len(c) {
		m := <-c
		streamed = append(streamed, entry{Msg: m.Type, Type: m.Progress.Type, Seq: m.Progress.Seq, Status: m.Progress.Status, Text: m.Progress.Text})
		if m.Type == "task" && (m.Task == nil || m.Task.Status != "failed" || len(m.Task.Progress) != 0) {
			t.Errorf("task message's task %+v, want the ended task, its progress after the end (none)", m.Task)
		}
	}
	if diff := cmp.Diff(want, streamed); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	v := tk.view(0)
	for _, p := range v.Progress {
		msg := "progress"
		if p.Type == endType {
			msg = "task"
		}
		viewed = append(viewed, entry{Msg: msg, Type: p.Type, Seq: p.Seq, Status: p.Status, Text: p.Text})
	}
	if diff := cmp.Diff(want, viewed); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	if v.Status != "failed" || v.Error != "no such thing" {
		t.Errorf("view status %q error %q", v.Status, v.Error)
	}
}
