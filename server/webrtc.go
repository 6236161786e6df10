package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/logging"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/apexagent/apex/video/h264"
)

// The WebRTC preview (POST /preview/webrtc): the page posts its whole
// offer (ICE gathered, no trickle) and gets the whole answer; the screen
// then flows as a video track carrying the same H.264 access units as the
// WebSocket preview (no re-encoding), straight from this machine to the
// browser over ICE host candidates. With Options.PreviewTransport
// "webrtc" the WebSocket preview answers 409 naming WebRTC, and the page
// switches.

// TransportWebRTC locks a playground's live preview to WebRTC.
const TransportWebRTC = "webrtc"

// ParsePreviewTransport reads a --preview-transport value: "auto" (or "")
// lets the page choose (H.264 over a WebSocket, else MJPEG), "webrtc"
// locks the preview to WebRTC.
func ParsePreviewTransport(v string) (string, error) {
	switch v {
	case "", "auto":
		return "", nil
	case TransportWebRTC:
		return TransportWebRTC, nil
	}
	return "", fmt.Errorf("--preview-transport %q: give auto (H.264 over a WebSocket, else MJPEG) or webrtc", v)
}

// transportHeader names, on a 409 of /preview/h264, the transport to use.
const transportHeader = "Apex-Transport"

// gatherTimeout bounds gathering this side's ICE candidates; a viewer
// that does not connect within connectTimeout of its answer is dropped.
const (
	gatherTimeout  = 10 * time.Second
	connectTimeout = 30 * time.Second
)

// lockedToWebRTC answers a request for the WebSocket preview with 409 when
// the preview is locked to WebRTC (true: answered).
func (s *Server) lockedToWebRTC(w http.ResponseWriter) bool {
	if s.opts.PreviewTransport != TransportWebRTC {
		return false
	}
	w.Header().Set(transportHeader, TransportWebRTC)
	writeError(w, 0, &apiError{code: http.StatusConflict, fields: map[string]any{"transport": TransportWebRTC},
		err: errors.New("this playground streams its preview over WebRTC only: POST the whole offer to /preview/webrtc")})
	return true
}

// rtcAPI builds peer connections that offer host candidates, loopback
// included (a viewer on this machine), and log pion's errors to log.
func rtcAPI(log *slog.Logger) *webrtc.API {
	var se webrtc.SettingEngine
	se.LoggerFactory = &logging.DefaultLoggerFactory{Writer: logWriter{log}, DefaultLogLevel: logging.LogLevelError}
	se.SetIncludeLoopbackCandidate(true)
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled) // real addresses; no multicast socket
	return webrtc.NewAPI(webrtc.WithSettingEngine(se))
}

// webrtcPreview answers an offer with the screen as an H.264 track.
// ?size=full and ?bitrate=N as for /preview/h264.
func (s *Server) webrtcPreview(w http.ResponseWriter, r *http.Request) {
	bitRate, ok := s.h264Request(w, r)
	if !ok {
		return
	}
	var offer webrtc.SessionDescription
	if err := readJSON(r, &offer); err != nil {
		writeError(w, 0, err)
		return
	}
	if offer.Type != webrtc.SDPTypeOffer || offer.SDP == "" {
		writeError(w, http.StatusBadRequest, fmt.Errorf("want the page's whole offer: {\"type\": \"offer\", \"sdp\": …} with its ICE candidates gathered"))
		return
	}
	// A peer is a viewer from its offer until it goes.
	leave := s.watch(w)
	if leave == nil {
		return
	}
	pc, err := rtcAPI(s.log).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		leave()
		writeError(w, http.StatusInternalServerError, fmt.Errorf("webrtc: %w", err))
		return
	}
	ctx, gone := context.WithCancel(context.Background())
	up := make(chan struct{})
	var once sync.Once
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		switch st {
		case webrtc.PeerConnectionStateConnected:
			once.Do(func() { close(up) })
		case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed, webrtc.PeerConnectionStateDisconnected:
			gone()
		}
	})
	track, err := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeH264, ClockRate: 90000,
		SDPFmtpLine: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"}, "screen", "apex")
	if err == nil {
		_, err = pc.AddTrack(track)
	}
	if err == nil {
		err = pc.SetRemoteDescription(offer)
	}
	var answer webrtc.SessionDescription
	if err == nil {
		answer, err = pc.CreateAnswer(nil)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err == nil {
		err = pc.SetLocalDescription(answer)
	}
	if err != nil {
		pc.Close()
		gone()
		leave()
		writeError(w, http.StatusBadRequest, fmt.Errorf("webrtc: answer the offer: %w (does the browser receive H.264 video?)", err))
		return
	}
	select {
	case <-gathered:
	case <-time.After(gatherTimeout):
		pc.Close()
		gone()
		leave()
		writeError(w, http.StatusServiceUnavailable, fmt.Errorf("webrtc: this machine found no network address to stream from in %s", gatherTimeout))
		return
	}
	key := previewSize(r) + "/" + strconv.Itoa(bitRate)
	f := s.h264.join(s, key, previewSize(r) == "full", bitRate)
	go func() {
		defer leave()
		defer s.h264.leave(key)
		defer pc.Close()
		defer gone()
		s.sendTrack(ctx, up, track, f)
	}()
	writeJSON(w, http.StatusOK, pc.LocalDescription())
}

// sendTrack writes f's access units to track once the peer is up, until
// ctx ends (the peer went) or f does: each key frame after the stream's
// parameter sets. It starts from the last key frame (f.subscribe), so a
// viewer decodes at once.
func (s *Server) sendTrack(ctx context.Context, up <-chan struct{}, track *webrtc.TrackLocalStaticSample, f *h264Feed) {
	t := time.NewTimer(connectTimeout)
	defer t.Stop()
	select {
	case <-up:
	case <-t.C:
		return
	case <-ctx.Done():
		return
	case <-f.done:
		return
	}
	v := f.subscribe()
	defer f.unsubscribe(v)
	var params []byte // SPS and PPS, Annex B
	var last float64  // the previous frame's receive time
	for {
		var msg []byte
		select {
		case msg = <-v.ch:
		case <-f.done:
			return
		case <-ctx.Done():
			return
		}
		if msg[0] == msgConfig {
			c, err := h264.ParseRecord(msg[2+int(msg[1]):])
			if err != nil {
				s.log.Warn("preview: webrtc: bad config", "err", err)
				return
			}
			params = h264.AccessUnit{NALs: [][]byte{c.SPS, c.PPS}}.AnnexB()
			continue
		}
		at := math.Float64frombits(binary.BigEndian.Uint64(msg[1:9]))
		d := 33 * time.Millisecond
		if last > 0 && at > last {
			d = time.Duration((at - last) * float64(time.Millisecond))
		}
		last = at
		data := annexB(msg[9:])
		if msg[0] == msgKey {
			data = append(append([]byte{}, params...), data...)
		}
		if err := track.WriteSample(media.Sample{Data: data, Duration: d}); err != nil {
			return
		}
	}
}

// logWriter writes pion's log lines to a slog.Logger.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Warn("preview: webrtc: " + strings.TrimSpace(string(p)))
	return len(p), nil
}

// annexB turns an AVCC access unit (4-byte lengths) into a byte stream.
func annexB(avcc []byte) []byte {
	var au h264.AccessUnit
	for len(avcc) >= 4 {
		n := int(binary.BigEndian.Uint32(avcc))
		if n > len(avcc)-4 {
			break
		}
		au.NALs = append(au.NALs, avcc[4:4+n])
		avcc = avcc[4+n:]
	}
	return au.AnnexB()
}
