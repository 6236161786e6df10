package server

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// uiFiles is the playground's web page: one HTML page, its script and its
// style, with no build step and nothing fetched from elsewhere.
//
//go:embed ui
var uiFiles embed.FS

// serveUI serves the web page at / to browsers and its files under /ui/;
// GET /api (and GET / for a client that does not ask for HTML) lists the
// endpoints.
func (s *Server) serveUI(m *http.ServeMux, endpoints []string) {
	index := func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"name": "apex playground", "id": s.id, "endpoints": endpoints})
	}
	files, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	page, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic(err)
	}
	m.HandleFunc("GET /api", index)
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if !wantsHTML(r) {
			index(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		_, _ = w.Write(page)
	})
	static := http.StripPrefix("/ui/", http.FileServerFS(files))
	m.Handle("GET /ui/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		static.ServeHTTP(w, r)
	}))
}

// wantsHTML reports whether the client asks for a page (a browser) rather
// than the JSON list of endpoints (curl, scripts, tests).
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
