package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/video/h264"
)

// The H.264 preview (GET /preview/h264, a WebSocket) sends binary
// messages, each a kind byte and its payload:
//
//	1 config: codec string length (1 byte), codec string ("avc1.42C01F"),
//	  then the AVCDecoderConfigurationRecord, a WebCodecs description
//	2 key frame, 3 delta frame: the server's receive time (float64 Unix
//	  milliseconds, big-endian), then the access unit as AVCC
//
// A viewer gets the config first, then the frames from the last key
// frame on. When the device cannot stream H.264 the socket closes with
// code 4409 and the reason (the page falls back to MJPEG).
const (
	msgConfig = 1
	msgKey    = 2
	msgDelta  = 3

	// closeRefused closes a socket whose device streams no H.264.
	closeRefused = 4409
	// defaultBitRate suits a half-size phone screen.
	defaultBitRate = 4_000_000
	// maxGOP bounds what a new viewer is sent to catch up from the last
	// key frame.
	maxGOP = 16 << 20
	// viewerQueue is how many messages a slow viewer may lag behind before
	// it skips to the next key frame.
	viewerQueue = 64
)

// h264Preview streams the session's screen as H.264 over a WebSocket.
// ?size=full asks for the screen's own size, ?bitrate=N the bit rate.
func (s *Server) h264Preview(w http.ResponseWriter, r *http.Request) {
	if s.lockedToWebRTC(w) {
		return
	}
	bitRate, ok := s.h264Request(w, r)
	if !ok {
		return
	}
	leave := s.watch(w)
	if leave == nil {
		return
	}
	defer leave()
	c, err := websocket.Accept(w, r, nil) // the page's own origin only
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context()) // the page sends nothing; a close ends ctx
	key := previewSize(r) + "/" + strconv.Itoa(bitRate)
	f := s.h264.join(s, key, previewSize(r) == "full", bitRate)
	defer s.h264.leave(key)
	v := f.subscribe()
	defer f.unsubscribe(v)
	for {
		select {
		case msg := <-v.ch:
			if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
				return
			}
		case <-f.done:
			reason := "the session ended"
			code := websocket.StatusNormalClosure
			if err := f.failure(); err != nil {
				code, reason = closeRefused, err.Error()
			}
			if len(reason) > 120 { // a close reason fits in 123 bytes: keep the device's words, at the end
				reason = "…" + strings.ToValidUTF8(reason[len(reason)-117:], "")
			}
			_ = c.Close(code, reason)
			return
		case <-ctx.Done():
			return
		}
	}
}

// h264Request checks that an H.264 preview can start (a session is open)
// and returns the bit rate it asks for (?bitrate=N) or the default; when
// not, it has answered w.
func (s *Server) h264Request(w http.ResponseWriter, r *http.Request) (int, bool) {
	if _, err := s.sess.open(false); err != nil {
		writeError(w, 0, err)
		return 0, false
	}
	v := r.URL.Query().Get("bitrate")
	if v == "" {
		return defaultBitRate, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 100_000 || n > 50_000_000 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("bitrate %q: give bits per second from 100000 to 50000000", v))
		return 0, false
	}
	return n, true
}

// h264Hub runs one H.264 producer per size and bit rate while anyone
// watches it.
type h264Hub struct {
	mu    sync.Mutex
	feeds map[string]*h264Feed
}

func (h *h264Hub) join(s *Server, key string, full bool, bitRate int) *h264Feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.feeds == nil {
		h.feeds = map[string]*h264Feed{}
	}
	f := h.feeds[key]
	if f == nil || f.ended() {
		ctx, stop := context.WithCancel(context.Background())
		f = &h264Feed{stop: stop, done: make(chan struct{}), subs: map[*viewer]bool{}}
		h.feeds[key] = f
		go s.produceH264(ctx, f, full, bitRate)
	}
	f.viewers++
	return f
}

func (h *h264Hub) leave(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.feeds[key]
	if f == nil {
		return
	}
	f.viewers--
	if f.viewers == 0 {
		f.stop()
		delete(h.feeds, key)
	}
}

// h264Feed is one producer's stream: the config, the frames since the
// last key frame, and the viewers.
type h264Feed struct {
	viewers int // guarded by the hub's mu
	stop    context.CancelFunc
	done    chan struct{} // closed when the producer ends

	mu     sync.Mutex
	config []byte   // the config message
	gop    [][]byte // messages from the last key frame on
	size   int      // bytes in gop
	subs   map[*viewer]bool
	err    error // why the device streams no H.264
}

type viewer struct {
	ch   chan []byte
	skip bool // lagged: waits for the next key frame
}

func (f *h264Feed) ended() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

func (f *h264Feed) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *h264Feed) end(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
	close(f.done)
}

// subscribe adds a viewer, queued the config and the frames since the
// last key frame.
func (f *h264Feed) subscribe() *viewer {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := &viewer{ch: make(chan []byte, viewerQueue+len(f.gop)+1), skip: f.config == nil || len(f.gop) == 0}
	if !v.skip {
		v.ch <- f.config
		for _, m := range f.gop {
			v.ch <- m
		}
	}
	f.subs[v] = true
	return v
}

func (f *h264Feed) unsubscribe(v *viewer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs, v)
}

// publish sends an access unit to every viewer; a new config first.
func (f *h264Feed) publish(au h264.AccessUnit) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sps, pps := au.Find(h264.TypeSPS), au.Find(h264.TypePPS); sps != nil && pps != nil {
		c := h264.Config{SPS: sps, PPS: pps}
		rec, err := c.Record()
		if err != nil {
			return err
		}
		codec := c.Codec()
		msg := append([]byte{msgConfig, byte(len(codec))}, codec...)
		msg = append(msg, rec...)
		if string(msg) != string(f.config) {
			f.config = msg
			for v := range f.subs {
				v.skip = true // they start again from this key frame
			}
		}
	}
	if f.config == nil {
		return nil // nothing to decode with yet
	}
	key := au.Key()
	kind := byte(msgDelta)
	if key {
		kind = msgKey
	}
	msg := make([]byte, 9, 9+len(au.AVCC()))
	msg[0] = kind
	binary.BigEndian.PutUint64(msg[1:], math.Float64bits(float64(time.Now().UnixMicro())/1000))
	msg = append(msg, au.AVCC()...)
	switch {
	case key:
		f.gop, f.size = [][]byte{msg}, len(msg)
	case f.gop != nil && f.size+len(msg) <= maxGOP:
		f.gop, f.size = append(f.gop, msg), f.size+len(msg)
	default:
		f.gop, f.size = nil, 0 // too long to replay: new viewers wait for a key frame
	}
	for v := range f.subs {
		if v.skip {
			if !key || len(v.ch) > 0 {
				continue
			}
			v.ch <- f.config
			v.skip = false
		}
		select {
		case v.ch <- msg:
		default:
			v.skip = true
		}
	}
	return nil
}

// produceH264 records the session's screen as H.264 into f until ctx
// ends or the session does. A device that cannot (not Android, no
// encoder) ends f with why before any frame; a recording that fails later
// starts again, and a broken link is opened again.
func (s *Server) produceH264(ctx context.Context, f *h264Feed, full bool, bitRate int) {
	sent := false
	var failure error
	defer func() { f.end(failure) }()
	for {
		dev, err := s.sess.open(false)
		if errors.Is(err, errRecreating) {
			if !wait(ctx, 100*time.Millisecond) {
				return
			}
			continue
		}
		if err != nil {
			return
		}
		rec, ok := dev.drv.(device.H264Recorder)
		if !ok {
			failure = fmt.Errorf("%s streams no H.264 (iOS previews are MJPEG)", dev.target.ID)
			return
		}
		w, h, err := previewDims(ctx, dev, full)
		if err != nil {
			failure = err
			return
		}
		pr, pw := io.Pipe()
		go func() {
			pw.CloseWithError(rec.ScreenRecordH264(ctx, device.RecordOptions{Width: w, Height: h, BitRate: bitRate}, pw))
		}()
		err = h264.Stream(ctx, pr, 20*time.Millisecond, func(au h264.AccessUnit) error {
			sent = true
			return f.publish(au)
		})
		pr.CloseWithError(io.ErrClosedPipe)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, device.ErrOffline):
			s.previewRelink(ctx, dev, err)
		case !sent:
			failure = err
			return
		default:
			s.log.Warn("preview: H.264 recording failed: starting it again", "device", dev.target.ID, "err", err)
			if !wait(ctx, 500*time.Millisecond) {
				return
			}
		}
	}
}

// wait waits d, or less when ctx ends first (false).
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
