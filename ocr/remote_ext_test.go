package ocr_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/ocr/remote"
)

// TestRemoteServesTesseract runs the remote engine (package remote) against Handler
// serving the real Tesseract engine over loopback HTTP.
func TestRemoteServesTesseract(t *testing.T) {
	srv := httptest.NewServer(remote.Handler(ocr.TestEngine(t)))
	defer srv.Close()
	r := remote.New(srv.URL, srv.Client())
	img, words := ocr.CanvasScreen(t)
	want := words[6]
	region := want.Box().Inset(-30)
	res, err := r.Recognize(context.Background(), img, &ocr.Options{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	if res.Width != 1080 || res.Height != 2400 || res.Region != region {
		t.Errorf("size %dx%d region %v, want 1080x2400 and %v", res.Width, res.Height, res.Region, region)
	}
	if !ocr.Found(res, want) {
		t.Errorf("remote read %+v, want %q at %v", res.Words, want.Text(), want.Box())
	}
}
