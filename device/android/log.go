package android

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
)

var _ device.LogReader = (*Driver)(nil)

// logcatTime is the stamp of `logcat -v threadtime,year,UTC`.
const logcatTime = "2006-01-02 15:04:05.000"

// ReadLog reads logcat's lines stamped after since.
func (d *Driver) ReadLog(ctx context.Context, since time.Time, max int) ([]device.LogEntry, error) {
	var out string
	err := d.call(ctx, "read the log", true, d.opts.Timeout, func(ctx context.Context) (err error) {
		out, err = d.shell(ctx, "logcat -d -v threadtime,year,UTC -t "+strconv.Itoa(max))
		return err
	})
	if err != nil {
		return nil, err
	}
	return parseLogcat(out, since), nil
}

func parseLogcat(out string, since time.Time) []device.LogEntry {
	entries := []device.LogEntry{}
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		if len(line) < len(logcatTime) {
			continue
		}
		t, err := time.Parse(logcatTime, line[:len(logcatTime)])
		if err != nil || !t.After(since) {
			continue
		}
		entries = append(entries, device.LogEntry{Time: t, Line: line})
	}
	return entries
}
