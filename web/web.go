// Package web holds the web calculator: the page (static/), its wasm engine
// (wasm/, built with GOOS=js GOARCH=wasm) and, after `go generate ./web`,
// the built site in dist/, which Site embeds so that `dpcalc serve` needs
// no files at run time. A clean checkout has an empty dist/: Site then
// reports that the page is not built.
package web

import (
	"embed"
	"io/fs"
)

//go:generate bash ../scripts/build-web.sh dist

//go:embed all:dist
var dist embed.FS

// Site returns the built site embedded in this binary, and whether it is
// complete (has main.wasm, wasm_exec.js and index.html).
func Site() (fs.FS, bool) {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		return nil, false
	}
	return sub, Complete(sub)
}

// Complete reports whether fsys holds a built site.
func Complete(fsys fs.FS) bool {
	for _, name := range []string{"index.html", "app.js", "worker.js", "wasm_exec.js", "main.wasm"} {
		if fi, err := fs.Stat(fsys, name); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}
