package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

// lineWriter hands the first line written to it to a channel.
type lineWriter struct {
	buf  []byte
	line chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	if w.buf = append(w.buf, p...); w.line != nil {
		if i := strings.IndexByte(string(w.buf), '\n'); i >= 0 {
			w.line <- string(w.buf[:i])
			w.line = nil
		}
	}
	return len(p), nil
}

// startServe runs `dpcalc serve --dir dir` in this process on a loopback
// port and returns its address and a stop function that cancels it (as
// SIGINT does) and returns the exit code.
func startServe(t *testing.T, dir string) (addr string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// The channel is kept here: Write sets out.line to nil once it has
	// sent the first line, and a select that read out.line after that
	// waited on a nil channel for ever (the URL line had been sent
	// before the select was reached).
	lines := make(chan string, 1)
	out := &lineWriter{line: lines}
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- runContext(ctx, []string{"serve", "--dir", dir, "--addr", "127.0.0.1:0"}, out, &stderr)
	}()
	select {
	case line := <-lines:
		m := regexp.MustCompile(`http://(\S+)/`).FindStringSubmatch(line)
		if m == nil {
			cancel()
			t.Fatalf("serve printed %q, want its URL", line)
		}
		addr = m[1]
	case c := <-code:
		cancel()
		t.Fatalf("serve exited %d before serving: %s", c, stderr.String())
	}
	var once sync.Once
	exit := -1
	return addr, func() int { once.Do(func() { cancel(); exit = <-code }); return exit }
}

// rawGet sends one request line (the path exactly as given, unescaped by
// no client) and returns the response status code.
func rawGet(t *testing.T, addr, method, path string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a hang fails here, not a verdict
	if _, err := io.WriteString(c, method+" "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %q: %v", method, path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeDirConfined checks what `serve --dir` refuses: files outside the
// folder through symlinks (of the file or of a parent directory), symlinks
// inside it, dotfiles and dot-directories, directory listings, malformed
// paths (400, never 500) and methods other than GET and HEAD (405).
// Before, os.DirFS and http.FileServerFS served /etc/passwd through a
// symlinked directory, /.env, /.git/config and listed directories.
func TestServeDirConfined(t *testing.T) {
	tmp := t.TempDir()
	site, outside := filepath.Join(tmp, "site"), filepath.Join(tmp, "outside")
	for _, d := range []string{site, outside, filepath.Join(site, "sub"), filepath.Join(site, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"index.html": "<!doctype html><title>t</title>", "app.js": "//a", "worker.js": "//w",
		"wasm_exec.js": "//x", "main.wasm": "\x00asm\x01\x00\x00\x00", "sub/page.js": "//p",
		".env": "SECRET=1", ".git/config": "[core]", "sub/.hidden.js": "//h",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(site, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "passwd"), []byte("root:x:0:0"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"etc":     outside,                              // a directory out of the folder
		"out.txt": filepath.Join(outside, "passwd"),     // a file out of the folder
		"rel.txt": "../outside/passwd",                  // the same, relative
		"link.js": "app.js",                             // a file inside
		"inner":   "sub",                                // a directory inside
		"env.js":  ".env",                               // a dotfile under another name
		"root":    "/",                                  // the file system's root
		"sub/up":  filepath.Join("..", "..", "outside"), // out, from a subdirectory
	} {
		if err := os.Symlink(target, filepath.Join(site, link)); err != nil {
			t.Fatal(err)
		}
	}
	addr, stop := startServe(t, site)
	defer stop()

	for _, tc := range []struct {
		path string
		want int
		body string
	}{
		{"/", 200, files["index.html"]},
		{"/?cmd=eps&sigma=4", 200, files["index.html"]},
		{"/index.html", 200, files["index.html"]},
		{"/main.wasm", 200, files["main.wasm"]},
		{"/sub/page.js", 200, files["sub/page.js"]},
		{"/nothere.js", 404, ""},
		// symlinks: out of the folder, and (by choice) inside it
		{"/etc/passwd", 404, ""},
		{"/out.txt", 404, ""},
		{"/rel.txt", 404, ""},
		{"/root/etc/passwd", 404, ""},
		{"/sub/up/passwd", 404, ""},
		{"/link.js", 404, ""},
		{"/inner/page.js", 404, ""},
		{"/env.js", 404, ""},
		// dotfiles and dot-directories
		{"/.env", 404, ""},
		{"/.git/config", 404, ""},
		{"/.git/", 400, ""},
		{"/sub/.hidden.js", 404, ""},
		{"/.gitignore", 404, ""},
		// directories are never listed
		{"/sub", 404, ""},
		{"/sub/", 400, ""},
		{"/etc", 404, ""},
		// malformed paths
		{"/index.html%00.txt", 400, ""},
		{"/..", 400, ""},
		{"/../outside/passwd", 400, ""},
		{"/sub/../index.html", 400, ""},
		{"/%2e%2e/outside/passwd", 400, ""},
		{"/sub/./page.js", 400, ""},
		{"//index.html", 400, ""},
		{"/sub%5cpage.js", 400, ""},
		{"/" + strings.Repeat("a", 2000), 400, ""},
	} {
		if got := rawGet(t, addr, "GET", tc.path); got != tc.want {
			t.Errorf("GET %.60s: %d, want %d", tc.path, got, tc.want)
		}
		if tc.body == "" {
			continue
		}
		resp, err := http.Get("http://" + addr + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tc.body {
			t.Errorf("GET %s: body %q, want %q", tc.path, b, tc.body)
		}
	}
	// A backslash as the client sent it (not escaped).
	if got := rawGet(t, addr, "GET", `/sub\page.js`); got != 400 {
		t.Errorf(`GET /sub\page.js: %d, want 400`, got)
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"} {
		if got := rawGet(t, addr, m, "/index.html"); got != 405 {
			t.Errorf("%s /index.html: %d, want 405", m, got)
		}
	}
	if got := rawGet(t, addr, "HEAD", "/app.js"); got != 200 {
		t.Errorf("HEAD /app.js: %d, want 200", got)
	}
	if code := stop(); code != 130 {
		t.Errorf("serve stopped by its context: exit %d, want 130 (interrupted)", code)
	}
}

// TestServeClosesIdleConnections checks that serve closes a connection
// that never sends a request and one kept alive after a request, after the
// configured timeouts (shortened here to 100 ms). Before, serve set only a
// header timeout and kept idle keep-alive connections open for ever. The
// read deadline only bounds a hang: the server closes the connection 300
// times sooner, so the verdict does not depend on the machine's speed.
func TestServeClosesIdleConnections(t *testing.T) {
	saved := serveLimits
	t.Cleanup(func() { serveLimits = saved })
	serveLimits.ReadHeader, serveLimits.Read, serveLimits.Idle = 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	site := t.TempDir()
	for _, name := range []string{"index.html", "app.js", "worker.js", "wasm_exec.js", "main.wasm"} {
		if err := os.WriteFile(filepath.Join(site, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr, stop := startServe(t, site)
	defer stop()
	closed := func(c net.Conn, r *bufio.Reader) error {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err := r.ReadByte()
		switch {
		case err == nil:
			return errors.New("the server sent data on an idle connection")
		case errors.Is(err, os.ErrDeadlineExceeded):
			return errors.New("the server kept the idle connection open for 30 s")
		}
		return nil // EOF or reset: the server closed it
	}
	t.Run("silent", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := closed(c, bufio.NewReader(c)); err != nil {
			t.Error(err)
		}
	})
	t.Run("keep-alive", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, "GET /app.js HTTP/1.1\r\nHost: x\r\n\r\n")
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Close {
			t.Fatalf("GET /app.js: %d, close %v; want 200 kept alive", resp.StatusCode, resp.Close)
		}
		if err := closed(c, r); err != nil {
			t.Error(err)
		}
	})
}

// TestServeEmbeddedSite checks the handler on a file system without
// symlinks (the embedded site's kind): files, "/", the wasm type, and the
// same refusals.
func TestServeEmbeddedSite(t *testing.T) {
	site := fstest.MapFS{
		"index.html": {Data: []byte("<!doctype html>")}, "main.wasm": {Data: []byte("\x00asm")},
		".gitignore": {Data: []byte("*")}, "sub/a.js": {Data: []byte("//a")},
	}
	h := siteHandler(site)
	for _, tc := range []struct {
		method, path string
		want         int
		ctype        string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8"},
		{"HEAD", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/main.wasm", 200, "application/wasm"},
		{"GET", "/sub/a.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/sub", 404, ""},
		{"GET", "/.gitignore", 404, ""},
		{"GET", "/sub/", 400, ""},
		{"POST", "/", 405, ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.want || tc.ctype != "" && w.Header().Get("Content-Type") != tc.ctype {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, w.Code, w.Header().Get("Content-Type"), tc.want, tc.ctype)
		}
	}
}
