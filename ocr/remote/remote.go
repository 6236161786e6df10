// Package remote is an OCR engine served over HTTP, and the handler that
// serves any engine so: a PaddleOCR server behind a small adapter, or a
// machine with Tesseract reading for others. It is its own package so the
// OCR types (package ocr) cost no HTTP stack to whatever reads them.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"

	"github.com/apexagent/apex/ocr"

	"golang.org/x/image/draw"
)

// The remote protocol: POST a JSON request, get a JSON response. Any
// service can speak it (a PaddleOCR server behind a small adapter, or
// Handler serving one of these engines on a bigger machine).
//
//	request:  {"image": <base64 PNG or JPEG>, "languages": ["eng", "chi_sim"]}
//	response: {"width": 1080, "height": 2400,
//	           "lines": [{"text": "Sign in", "box": [x0, y0, x1, y1], "confidence": 0.93,
//	                      "words": [{"text": "Sign", "box": [...], "confidence": 0.95}, …]}]}
//
// Boxes are in the posted image's pixels; confidence is 0..1; words are
// optional (a line without them is one word).
type remoteRequest struct {
	Image     []byte   `json:"image"`
	Languages []string `json:"languages,omitempty"`
}

type remoteBox [4]int

type remoteWord struct {
	Text       string    `json:"text"`
	Box        remoteBox `json:"box"`
	Confidence float64   `json:"confidence"`
}

type remoteLine struct {
	remoteWord
	Words []remoteWord `json:"words,omitempty"`
}

type remoteResponse struct {
	Width  int          `json:"width"`
	Height int          `json:"height"`
	Lines  []remoteLine `json:"lines"`
	Error  string       `json:"error,omitempty"`
}

// Engine is an engine served over HTTP (see the protocol above). It is
// safe for concurrent use.
type Engine struct {
	url    string
	client *http.Client
}

var _ ocr.Engine = (*Engine)(nil)

// New returns an engine posting to url; a nil client means
// http.DefaultClient.
func New(url string, client *http.Client) *Engine {
	if client == nil {
		client = http.DefaultClient
	}
	return &Engine{url: url, client: client}
}

// Recognize implements ocr.Engine. A region is cropped here and only the crop
// is sent; Scale and PSM are Tesseract's and are ignored.
func (r *Engine) Recognize(ctx context.Context, img []byte, opts *ocr.Options) (*ocr.Result, error) {
	if opts == nil {
		opts = &ocr.Options{}
	}
	body, full, region, err := crop(img, opts.Region)
	if err != nil {
		return nil, err
	}
	req, err := json.Marshal(remoteRequest{Image: body, Languages: opts.Languages})
	if err != nil {
		return nil, fmt.Errorf("ocr: encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(req))
	if err != nil {
		return nil, fmt.Errorf("ocr: remote %s: %w", r.url, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("ocr: remote %s: %w", r.url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("ocr: remote %s: read response: %w", r.url, err)
	}
	lines, err := decodeRemote(data, resp.StatusCode)
	if err != nil {
		return nil, fmt.Errorf("ocr: remote %s: %w", r.url, err)
	}
	res := &ocr.Result{Width: full.Dx(), Height: full.Dy(), Region: region, Languages: opts.Languages}
	for _, l := range lines {
		words := l.Words[:0]
		for _, w := range l.Words {
			w.Box = w.Box.Add(region.Min).Intersect(region)
			if !w.Box.Empty() {
				words = append(words, w)
			}
		}
		if len(words) > 0 {
			nl := ocr.NewLine(words)
			res.Lines = append(res.Lines, nl)
			res.Words = append(res.Words, nl.Words...)
		}
	}
	return res, nil
}

// decodeRemote reads a response body into lines of words, checking every
// box and confidence.
func decodeRemote(data []byte, status int) ([]ocr.Line, error) {
	var rr remoteResponse
	if err := json.Unmarshal(data, &rr); err != nil {
		if status != http.StatusOK {
			return nil, fmt.Errorf("HTTP %d: %s", status, strings.TrimSpace(string(data[:min(len(data), 200)])))
		}
		return nil, fmt.Errorf("response is not the OCR JSON: %w", err)
	}
	if rr.Error != "" || status != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", status, rr.Error)
	}
	word := func(w remoteWord) (ocr.Word, error) {
		b := image.Rect(w.Box[0], w.Box[1], w.Box[2], w.Box[3])
		if b.Empty() || w.Box[0] > w.Box[2] || w.Box[1] > w.Box[3] {
			return ocr.Word{}, fmt.Errorf("word %q has an empty or inverted box %v", w.Text, w.Box)
		}
		if !(w.Confidence >= 0 && w.Confidence <= 1) {
			return ocr.Word{}, fmt.Errorf("word %q has confidence %v outside 0..1", w.Text, w.Confidence)
		}
		return ocr.Word{Text: strings.TrimSpace(w.Text), Box: b, Confidence: w.Confidence}, nil
	}
	var out []ocr.Line
	for _, l := range rr.Lines {
		src := l.Words
		if len(src) == 0 {
			src = []remoteWord{l.remoteWord}
		}
		var words []ocr.Word
		for _, rw := range src {
			w, err := word(rw)
			if err != nil {
				return nil, err
			}
			if w.Text != "" {
				words = append(words, w)
			}
		}
		if len(words) > 0 {
			out = append(out, ocr.Line{Words: words})
		}
	}
	return out, nil
}

// crop returns the image to send (the region re-encoded as PNG, or the
// image as it came), the full image's bounds and the region read.
func crop(data []byte, region image.Rectangle) ([]byte, image.Rectangle, image.Rectangle, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, image.Rectangle{}, image.Rectangle{}, fmt.Errorf("%w: %v", ocr.ErrBadImage, err)
	}
	full := image.Rect(0, 0, cfg.Width, cfg.Height)
	if region == (image.Rectangle{}) || region.Intersect(full) == full {
		return data, full, full, nil
	}
	region = region.Intersect(full)
	if region.Empty() {
		return nil, full, region, fmt.Errorf("ocr: region lies outside the %dx%d image or is empty", cfg.Width, cfg.Height)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, full, region, fmt.Errorf("%w: %v", ocr.ErrBadImage, err)
	}
	dst := image.NewRGBA(image.Rect(0, 0, region.Dx(), region.Dy()))
	draw.Draw(dst, dst.Bounds(), img, region.Min, draw.Src)
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, dst); err != nil {
		return nil, full, region, fmt.Errorf("ocr: encode region: %w", err)
	}
	return buf.Bytes(), full, region, nil
}

// Handler serves e over the remote protocol, so an engine on one machine
// can read for others (POST only; errors come back as {"error": …}).
func Handler(e ocr.Engine) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fail := func(code int, err error) {
			w.WriteHeader(code)
			json.NewEncoder(w).Encode(remoteResponse{Error: err.Error()})
		}
		if req.Method != http.MethodPost {
			fail(http.StatusMethodNotAllowed, fmt.Errorf("POST a JSON request"))
			return
		}
		var rr remoteRequest
		if err := json.NewDecoder(io.LimitReader(req.Body, 64<<20)).Decode(&rr); err != nil {
			fail(http.StatusBadRequest, fmt.Errorf("request is not JSON with a base64 image: %v", err))
			return
		}
		res, err := e.Recognize(req.Context(), rr.Image, &ocr.Options{Languages: rr.Languages})
		if err != nil {
			fail(http.StatusUnprocessableEntity, err)
			return
		}
		out := remoteResponse{Width: res.Width, Height: res.Height, Lines: []remoteLine{}}
		box := func(r image.Rectangle) remoteBox { return remoteBox{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y} }
		for _, l := range res.Lines {
			rl := remoteLine{remoteWord: remoteWord{Text: l.Text, Box: box(l.Box), Confidence: l.Confidence}}
			for _, wd := range l.Words {
				rl.Words = append(rl.Words, remoteWord{Text: wd.Text, Box: box(wd.Box), Confidence: wd.Confidence})
			}
			out.Lines = append(out.Lines, rl)
		}
		json.NewEncoder(w).Encode(out)
	})
}
