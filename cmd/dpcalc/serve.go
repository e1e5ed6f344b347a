package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/dpcalc/dpcalc/web"
)

// ServeCmd serves the web calculator (the page scripts/build-web.sh builds)
// on a local address. All computation happens in the browser.
type ServeCmd struct {
	Addr string `name:"addr" default:"127.0.0.1:8080" help:"Address to listen on (default: ${default})."`
	Dir  string `name:"dir" placeholder:"DIR" help:"Serve the site scripts/build-web.sh built in DIR instead of the one built into this binary by go generate ./web."`
}

// Run implements the command: it serves until interrupted.
func (c *ServeCmd) Run(e *env) error {
	var site fs.FS
	if c.Dir != "" {
		site = os.DirFS(c.Dir)
		if !web.Complete(site) {
			return usageError("invalid --dir: %q holds no built site (index.html, app.js, worker.js, wasm_exec.js, main.wasm): run scripts/build-web.sh %s", c.Dir, c.Dir)
		}
	} else {
		var ok bool
		if site, ok = web.Site(); !ok {
			return errors.New("serve: this binary has no web page built in: run `go generate ./web` and rebuild dpcalc, or `scripts/build-web.sh DIR` and `dpcalc serve --dir DIR`")
		}
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return usageError("invalid --addr: %v", err)
	}
	srv := &http.Server{Handler: siteHandler(site), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "serving the dpcalc calculator at http://%s/ (Ctrl-C stops)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-e.ctx.Done():
		srv.Close()
		<-done
		return nil
	}
}

// siteHandler serves site's files with a strict content policy: the page
// loads only its own scripts and wasm, and talks to no one.
func siteHandler(site fs.FS) http.Handler {
	files := http.FileServerFS(site)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == "/.gitignore" {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}
