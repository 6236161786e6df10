package h264

import (
	"context"
	"io"
	"time"
)

// Stream reads an Annex-B stream from r and calls each with every access
// unit, until r ends (nil), each fails (its error) or ctx ends. An access
// unit is complete when the next begins; when r has been quiet for idle
// after a write, the one gathered so far is taken as complete too, since
// a live encoder sends the next only when the screen changes. Stream
// returns when r is done; cancelling ctx does not interrupt a blocked
// Read, so the caller closes r.
func Stream(ctx context.Context, r io.Reader, idle time.Duration, each func(AccessUnit) error) error {
	type chunk struct {
		b   []byte
		err error
	}
	chunks := make(chan chunk)
	free := make(chan []byte, 2)
	free <- make([]byte, 64<<10)
	free <- make([]byte, 64<<10)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			var buf []byte
			select {
			case buf = <-free:
			case <-done:
				return
			}
			n, err := r.Read(buf)
			select {
			case chunks <- chunk{buf[:n], err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var s Splitter
	emit := func(aus []AccessUnit) error {
		for _, au := range aus {
			if err := each(au); err != nil {
				return err
			}
		}
		return nil
	}
	quiet := time.NewTimer(idle)
	quiet.Stop()
	defer quiet.Stop()
	for {
		select {
		case c := <-chunks:
			aus := s.Write(c.b)
			free <- c.b[:cap(c.b)]
			if c.err != nil {
				aus = append(aus, s.Flush()...)
			}
			if err := emit(aus); err != nil {
				return err
			}
			if c.err == io.EOF {
				return nil
			}
			if c.err != nil {
				return c.err
			}
			if s.Pending() {
				quiet.Reset(idle)
			}
		case <-quiet.C:
			if err := emit(s.Flush()); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
