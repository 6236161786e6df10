package remote

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apexagent/apex/ocr"
)

// failing is an engine that fails every read.
type failing struct{ err error }

func (e failing) Recognize(context.Context, []byte, *ocr.Options) (*ocr.Result, error) {
	return nil, e.err
}

// blankPNG is a valid PNG of w×h pixels.
func blankPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRemoteErrors(t *testing.T) {
	srv := httptest.NewServer(Handler(failing{errors.New("engine broke")}))
	defer srv.Close()
	img := blankPNG(t, 40, 20)
	_, err := New(srv.URL, srv.Client()).Recognize(context.Background(), img, nil)
	if err == nil || !strings.Contains(err.Error(), "engine broke") || !strings.Contains(err.Error(), "HTTP 422") {
		t.Errorf("err %v, want the service's error with its status", err)
	}
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	if _, err := New(plain.URL, plain.Client()).Recognize(context.Background(), img, nil); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("404: err %v", err)
	}
	if _, err := New(srv.URL, nil).Recognize(context.Background(), []byte("junk"), nil); !errors.Is(err, ocr.ErrBadImage) {
		t.Errorf("junk image: err %v, want ocr.ErrBadImage", err)
	}
}

func TestDecodeRemote(t *testing.T) {
	lines, err := decodeRemote([]byte(`{"width":100,"height":50,"lines":[
		{"text":"Sign in","box":[1,2,60,20],"confidence":0.9},
		{"text":"ignored","box":[0,0,1,1],"confidence":0.5,"words":[{"text":"OK","box":[5,30,25,45],"confidence":0.8}]}]}`), 200)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0].Words[0].Text != "Sign in" || lines[1].Words[0].Text != "OK" {
		t.Errorf("lines %+v", lines)
	}
	for name, body := range map[string]string{
		"inverted box":  `{"lines":[{"text":"a","box":[10,10,5,20],"confidence":0.5}]}`,
		"confidence 90": `{"lines":[{"text":"a","box":[0,0,5,5],"confidence":90}]}`,
		"not json":      `<html>`,
		"service error": `{"error":"no model loaded"}`,
	} {
		if _, err := decodeRemote([]byte(body), 200); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzDecodeRemote(f *testing.F) {
	f.Add([]byte(`{"lines":[{"text":"Sign in","box":[1,2,60,20],"confidence":0.9}]}`))
	f.Add([]byte(`{"lines":[{"text":"x","box":[0,0,1,1],"confidence":1,"words":[{"text":"y","box":[0,0,2,2],"confidence":0}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := decodeRemote(data, 200)
		if err != nil {
			return
		}
		for _, l := range lines {
			for _, w := range l.Words {
				if w.Box.Empty() || w.Confidence < 0 || w.Confidence > 1 || w.Text == "" {
					t.Fatalf("bad word %+v", w)
				}
			}
		}
	})
}
