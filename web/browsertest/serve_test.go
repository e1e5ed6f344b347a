package browsertest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestServe checks dpcalc serve without a browser: what it refuses, the
// files and headers it serves, and exit code 130 on SIGINT. It runs in every
// go test ./... (no Chromium needed).
func TestServe(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dpcalc")
	build := exec.Command("go", "build", "-o", bin, "./cmd/dpcalc")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// A directory that is not a built site is bad input.
	cmd := exec.Command(bin, "serve", "--dir", tmp, "--addr", "127.0.0.1:0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "invalid --dir") {
		t.Errorf("serve --dir with no site: %v, stderr %q; want exit 2, invalid --dir", err, stderr.String())
	}
	cmd = exec.Command(bin, "serve", "--dir", tmp, "--addr", "nonsense")
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("serve --addr nonsense: %v, want exit 2", err)
	}

	// A stand-in site: serve does not look inside the files.
	site := filepath.Join(tmp, "site")
	os.Mkdir(site, 0o755)
	files := map[string]string{
		"index.html": "<!doctype html><title>t</title>", "app.js": "//a", "worker.js": "//w",
		"wasm_exec.js": "//x", "main.wasm": "\x00asm\x01\x00\x00\x00", ".gitignore": "*",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(site, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd = exec.Command(bin, "serve", "--dir", site, "--addr", "127.0.0.1:0")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	base := regexp.MustCompile(`http://\S+/`).FindString(line)
	if base == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("serve printed %q, want its URL", line)
	}
	tests := []struct {
		path, status, ctype, body string
	}{
		{"", "200 OK", "text/html; charset=utf-8", files["index.html"]},
		{"?cmd=eps&sigma=4", "200 OK", "text/html; charset=utf-8", files["index.html"]},
		{"main.wasm", "200 OK", "application/wasm", files["main.wasm"]},
		{"worker.js", "200 OK", "text/javascript; charset=utf-8", files["worker.js"]},
		{".gitignore", "404 Not Found", "", ""},
		{"nothere.js", "404 Not Found", "", ""},
	}
	for _, tt := range tests {
		resp, err := http.Get(base + tt.path)
		if err != nil {
			t.Errorf("GET /%s: %v", tt.path, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Status != tt.status {
			t.Errorf("GET /%s: %s, want %s", tt.path, resp.Status, tt.status)
			continue
		}
		if tt.ctype != "" && resp.Header.Get("Content-Type") != tt.ctype {
			t.Errorf("GET /%s: Content-Type %q, want %q", tt.path, resp.Header.Get("Content-Type"), tt.ctype)
		}
		if tt.body != "" && string(b) != tt.body {
			t.Errorf("GET /%s: body %q, want %q", tt.path, b, tt.body)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET /%s: Content-Security-Policy %q", tt.path, csp)
		}
	}
	// SIGINT stops it with the exit code of every interrupted command.
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("serve after SIGINT: %v, want exit 130", err)
	}
}
