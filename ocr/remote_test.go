package ocr

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRemoteServesTesseract runs the remote client against Handler
// serving the real Tesseract engine over loopback HTTP.
func TestRemoteServesTesseract(t *testing.T) {
	srv := httptest.NewServer(Handler(testEngine(t)))
	defer srv.Close()
	r := NewRemote(srv.URL, srv.Client())
	img, words := canvasScreen(t)
	want := words[6]
	region := want.box.Inset(-30)
	res, err := r.Recognize(context.Background(), img, &Options{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	if res.Width != 1080 || res.Height != 2400 || res.Region != region {
		t.Errorf("size %dx%d region %v, want 1080x2400 and %v", res.Width, res.Height, res.Region, region)
	}
	if !found(res, want) {
		t.Errorf("remote read %+v, want %q at %v", res.Words, want.text, want.box)
	}
}

func TestRemoteErrors(t *testing.T) {
	srv := httptest.NewServer(Handler(&countingEngine{err: errors.New("engine broke")}))
	defer srv.Close()
	img, _ := canvasScreen(t)
	_, err := NewRemote(srv.URL, srv.Client()).Recognize(context.Background(), img, nil)
	if err == nil || !strings.Contains(err.Error(), "engine broke") || !strings.Contains(err.Error(), "HTTP 422") {
		t.Errorf("err %v, want the service's error with its status", err)
	}
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	if _, err := NewRemote(plain.URL, plain.Client()).Recognize(context.Background(), img, nil); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("404: err %v", err)
	}
	if _, err := NewRemote(srv.URL, nil).Recognize(context.Background(), []byte("junk"), nil); !errors.Is(err, ErrBadImage) {
		t.Errorf("junk image: err %v, want ErrBadImage", err)
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
