package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/web"
)

// serveLimits are the server's timeouts and header limit. A connection
// that sends no complete request header within ReadHeader, or no complete
// request within Read, or that sits idle between requests for Idle, is
// closed; a response not written within Write is cut. Tests shorten them.
var serveLimits = struct {
	ReadHeader, Read, Write, Idle, Shutdown time.Duration
	MaxHeaderBytes                          int
}{
	ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: 2 * time.Minute,
	Idle: 60 * time.Second, Shutdown: 5 * time.Second, MaxHeaderBytes: 16 << 10,
}

// maxServePath is the longest URL path serve looks up; a longer one is a
// 400 (the site's own names are a few bytes).
const maxServePath = 1024

// runServe serves the web calculator (the page scripts/build-web.sh builds)
// on a local address until interrupted, then returns the context's error
// (exit code 130, as for every interrupted command). All computation
// happens in the browser.
func runServe(e *cli.Env, c *cli.ServeCmd) error {
	var site fs.FS
	if c.Dir != "" {
		// os.Root confines every open to the folder: a symlink (or a
		// symlinked parent directory) that leads out of it fails to open.
		root, err := os.OpenRoot(c.Dir)
		if err != nil {
			return usageError("invalid --dir: %v", err)
		}
		defer root.Close()
		site = root.FS()
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
	l := serveLimits
	srv := &http.Server{
		Handler:           siteHandler(site),
		ReadHeaderTimeout: l.ReadHeader, ReadTimeout: l.Read, WriteTimeout: l.Write,
		IdleTimeout: l.Idle, MaxHeaderBytes: l.MaxHeaderBytes,
	}
	fmt.Fprintf(e.Stdout, "serving the dpcalc calculator at http://%s/ (Ctrl-C stops)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-e.Ctx.Done():
		// Let requests in flight finish (briefly), then stop.
		sctx, cancel := context.WithTimeout(context.Background(), l.Shutdown)
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
		cancel()
		<-done
		return e.Ctx.Err()
	}
}

// siteHandler serves site's files with a strict content policy: the page
// loads only its own scripts and wasm, and talks to no one. It serves GET
// and HEAD of regular files only: "/" is index.html; a directory, a
// symlink (inside the site or out of it, at any depth of the path), a
// dotfile or a file under a dot-directory is a 404; a malformed path (NUL,
// backslash, "..", ".", empty segments, longer than maxServePath bytes) is
// a 400; other methods are a 405. Nothing is ever listed.
func siteHandler(site fs.FS) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, status := sitePath(r.URL.Path)
		if status != http.StatusOK {
			http.Error(w, http.StatusText(status), status)
			return
		}
		f, fi, err := openRegular(site, name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		rs, ok := f.(io.ReadSeeker)
		if !ok {
			http.Error(w, "500 file not seekable", http.StatusInternalServerError)
			return
		}
		http.ServeContent(w, r, fi.Name(), fi.ModTime(), rs)
	})
}

// sitePath maps a URL path to a name in the site, or returns 400 for a
// malformed path and 404 for a dotfile or a path under a dot-directory.
func sitePath(p string) (string, int) {
	switch {
	case len(p) > maxServePath, !strings.HasPrefix(p, "/"),
		strings.ContainsAny(p, "\x00\\"):
		return "", http.StatusBadRequest
	case p == "/":
		return "index.html", http.StatusOK
	}
	name := p[1:]
	if !fs.ValidPath(name) {
		return "", http.StatusBadRequest // "..", ".", "a//b", a trailing "/"
	}
	for _, seg := range strings.Split(name, "/") {
		if strings.HasPrefix(seg, ".") {
			return "", http.StatusNotFound
		}
	}
	return name, http.StatusOK
}

// openRegular opens name in site if every directory on its path is a
// directory and name a regular file, none of them a symlink (fs.Lstat:
// os.Root's FS reports symlinks; an embedded FS has none).
func openRegular(site fs.FS, name string) (fs.File, fs.FileInfo, error) {
	segs := strings.Split(name, "/")
	for i := range segs {
		fi, err := fs.Lstat(site, strings.Join(segs[:i+1], "/"))
		if err != nil {
			return nil, nil, err
		}
		last := i == len(segs)-1
		if (last && !fi.Mode().IsRegular()) || (!last && !fi.IsDir()) {
			return nil, nil, fs.ErrNotExist
		}
	}
	f, err := site.Open(name)
	if err != nil {
		return nil, nil, err
	}
	// Check what was opened, not only what was looked at: a path swapped
	// for a directory or a device in between is refused too.
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fs.ErrNotExist
	}
	return f, fi, nil
}
