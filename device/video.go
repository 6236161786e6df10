package device

import (
	"context"
	"image"
	"io"
)

// RecordOptions tune a live recording of the screen: the frames' size
// in the display's natural orientation (0: the display's; a rotated
// display gets it turned), for H.264 the bit rate (0: the device's
// default), and how long one recording runs before it is started again
// (0: the device's own limit).
type RecordOptions struct {
	Width, Height int
	BitRate       int
	TimeLimit     int // seconds
}

// H264Recorder is a Driver that streams the screen as H.264 (Annex B):
// Android's screenrecord. It writes to w until ctx ends (ctx's error) or
// the recording fails (the device's own words: no encoder, a size it
// refuses).
type H264Recorder interface {
	ScreenRecordH264(ctx context.Context, o RecordOptions, w io.Writer) error
}

// FrameStreamer is a Driver whose device pushes a frame of width×height
// at each change of its screen; each may keep the frame until it returns.
type FrameStreamer interface {
	ScreenFrames(ctx context.Context, width, height int, each func(*image.RGBA) error) error
}
