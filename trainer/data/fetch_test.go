package data

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixtureSet is a small idx data set (500 noisy 28×28 images, so the gzip
// files are tens of KiB) with its spec and gzip-compressed files.
type fixtureSet struct {
	spec *setSpec
	gz   map[string][]byte // "<base>.gz" → content
}

func newFixtureSet(t *testing.T) *fixtureSet {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	mk := func(n int) (img, lbl []byte) {
		pix := make([]byte, n*784)
		for i := range pix {
			pix[i] = byte(rng.IntN(256))
		}
		l := make([]byte, n)
		for i := range l {
			l[i] = byte(i % 10)
		}
		return idxBytes(idxImages, n, 28, 28, pix), idxBytes(idxLabels, n, 0, 0, l)
	}
	trImg, trLbl := mk(500)
	teImg, teLbl := mk(100)
	fs := &fixtureSet{gz: map[string][]byte{}}
	spec := &setSpec{Name: "fixture", Classes: 10}
	add := func(base string, raw []byte, magic uint32, n int) fileSpec {
		fs.gz[base+".gz"] = gzipBytes(t, raw)
		f := fileSpec{Base: base, SHA256: sha256Hex(raw), Size: int64(len(raw)), Magic: magic, N: n}
		if magic == idxImages {
			f.Rows, f.Cols = 28, 28
		}
		return f
	}
	spec.Train = [2]fileSpec{add("train-images-idx3-ubyte", trImg, idxImages, 500), add("train-labels-idx1-ubyte", trLbl, idxLabels, 500)}
	spec.Test = [2]fileSpec{add("t10k-images-idx3-ubyte", teImg, idxImages, 100), add("t10k-labels-idx1-ubyte", teLbl, idxLabels, 100)}
	fs.spec = spec
	return fs
}

// mirror is an httptest handler serving files under a prefix, with knobs
// for misbehaviour, and a request log.
type mirror struct {
	files     map[string][]byte
	notFound  bool              // every request gets 404
	noRange   bool              // ignore Range headers
	truncate  map[string]int    // file → serve only this many bytes on its first request
	stall     map[string]int    // file → send this many bytes on its first request, then hang
	status    int               // if non-zero, answer every request with this status
	onRequest func()            // if set, called on every request
	override  map[string][]byte // file → different content
	mu        sync.Mutex
	requests  []string // "file range"
	truncated map[string]bool
}

func (m *mirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := filepath.Base(r.URL.Path)
	m.mu.Lock()
	m.requests = append(m.requests, name+" "+r.Header.Get("Range"))
	first := !m.truncated[name]
	if m.truncated == nil {
		m.truncated = map[string]bool{}
	}
	m.truncated[name] = true
	m.mu.Unlock()
	if m.onRequest != nil {
		m.onRequest()
	}
	if ae := r.Header.Get("Accept-Encoding"); ae != "identity" {
		http.Error(w, "client must ask for Accept-Encoding: identity, got "+ae, http.StatusBadRequest)
		return
	}
	if m.status != 0 {
		http.Error(w, "failing", m.status)
		return
	}
	content, ok := m.files[name]
	if o, ok2 := m.override[name]; ok2 {
		content = o
	}
	if m.notFound || !ok {
		http.NotFound(w, r)
		return
	}
	if n, ok := m.truncate[name]; ok && first {
		// Announce the full length, send part of it, and drop the connection.
		w.Header().Set("Content-Length", fmt.Sprint(len(content)))
		w.WriteHeader(http.StatusOK)
		w.Write(content[:n])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	if n, ok := m.stall[name]; ok && first {
		w.Header().Set("Content-Length", fmt.Sprint(len(content)))
		w.WriteHeader(http.StatusOK)
		w.Write(content[:n])
		w.(http.Flusher).Flush()
		<-r.Context().Done() // hang until the client gives up
		return
	}
	if m.noRange {
		r.Header.Del("Range")
		w.Header().Set("Content-Length", fmt.Sprint(len(content)))
		w.Write(content)
		return
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(content))
}

// stallAt sets opt's stall watchdog to fire once, when file has arrived
// up to byte n (where the test's server stalls), and never by the clock: the
// stall tests then do not depend on how busy the machine is. Each attempt's
// watchdog is its own; a stopped one no longer fires.
func stallAt(opt *FetchOptions, file string, n int64) {
	var mu sync.Mutex
	var fire *func()
	var once sync.Once
	opt.stallTimer = func(_ time.Duration, f func()) stopResetter {
		mine := &f
		mu.Lock()
		fire = mine
		mu.Unlock()
		return fakeTimer{func() {
			mu.Lock()
			if fire == mine {
				fire = nil
			}
			mu.Unlock()
		}}
	}
	prev := opt.Progress
	opt.Progress = func(f string, done, total int64) {
		if prev != nil {
			prev(f, done, total)
		}
		if f == file && done >= n {
			once.Do(func() {
				mu.Lock()
				g := fire
				mu.Unlock()
				if g != nil {
					(*g)()
				}
			})
		}
	}
}

type fakeTimer struct{ stop func() }

func (t fakeTimer) Stop() bool               { t.stop(); return true }
func (t fakeTimer) Reset(time.Duration) bool { return true }

func (m *mirror) log() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.requests...)
}

func newMirrors(t *testing.T, ms ...*mirror) (*http.Client, []string) {
	t.Helper()
	mux := http.NewServeMux()
	var urls []string
	for i, m := range ms {
		prefix := fmt.Sprintf("/m%d/", i)
		mux.Handle(prefix, m)
		urls = append(urls, prefix)
	}
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	for i := range urls {
		urls[i] = srv.URL + urls[i]
	}
	return srv.Client(), urls
}

func fastOpts(c *http.Client, mirrors []string) FetchOptions {
	return FetchOptions{Client: c, Mirrors: mirrors, Backoff: time.Millisecond, Retries: 2}
}

// checkFetched asserts that dir holds exactly the four .gz files and that
// they load.
func checkFetched(t *testing.T, fs *fixtureSet, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := "t10k-images-idx3-ubyte.gz,t10k-labels-idx1-ubyte.gz,train-images-idx3-ubyte.gz,train-labels-idx1-ubyte.gz"
	if strings.Join(names, ",") != want {
		t.Errorf("dir holds %v, want %s", names, want)
	}
	for name, content := range fs.gz {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, content) {
			t.Errorf("%s: content differs from the served file (err %v)", name, err)
		}
	}
	train, test, err := loadIdxSet(fs.spec, dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 500 || test.N != 100 {
		t.Errorf("loaded N = %d/%d", train.N, test.N)
	}
}

func TestFetchGood(t *testing.T) {
	fs := newFixtureSet(t)
	m := &mirror{files: fs.gz}
	c, urls := newMirrors(t, m)
	dir := filepath.Join(t.TempDir(), "new", "dir")
	var mu sync.Mutex
	last := map[string][2]int64{}
	opt := fastOpts(c, urls)
	opt.Progress = func(file string, done, total int64) {
		mu.Lock()
		last[file] = [2]int64{done, total}
		mu.Unlock()
	}
	if err := fetchSet(context.Background(), fs.spec, dir, opt); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, fs, dir)
	for name, content := range fs.gz {
		if p := last[name]; p[0] != int64(len(content)) || p[1] != int64(len(content)) {
			t.Errorf("last progress for %s = %v, want [%d %d]", name, p, len(content), len(content))
		}
	}
	if n := len(m.log()); n != 4 {
		t.Errorf("%d requests, want 4: %v", n, m.log())
	}
	// Present and valid files are skipped: no new requests.
	if err := fetchSet(context.Background(), fs.spec, dir, opt); err != nil {
		t.Fatal(err)
	}
	if n := len(m.log()); n != 4 {
		t.Errorf("second Fetch made %d new requests, want 0", n-4)
	}
}

func TestFetchChecksumMismatch(t *testing.T) {
	fs := newFixtureSet(t)
	const bad = "train-labels-idx1-ubyte.gz"
	wrong := gzipBytes(t, idxBytes(idxLabels, 500, 0, 0, make([]byte, 500))) // valid, but all zeros
	m1 := &mirror{files: fs.gz, override: map[string][]byte{bad: wrong}}
	m2 := &mirror{files: fs.gz, override: map[string][]byte{bad: wrong}}
	c, urls := newMirrors(t, m1, m2)
	dir := t.TempDir()
	err := fetchSet(context.Background(), fs.spec, dir, fastOpts(c, urls))
	if err == nil {
		t.Fatal("Fetch succeeded with a corrupt file")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "data: fetch "+bad) || strings.Count(msg, "sha-256 of decompressed content is") != 2 || strings.Contains(msg, "\n") {
		t.Errorf("err = %q, want one line naming %s with a sha-256 mismatch per mirror", msg, bad)
	}
	for _, p := range []string{bad, bad + ".part"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a failed verification (stat err %v)", p, err)
		}
	}
	// The file before it was fetched and published; the ones after were not tried.
	if _, err := os.Stat(filepath.Join(dir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Errorf("train images not kept: %v", err)
	}
	// A wrong file on a mirror is not retried there.
	if got := countFile(m1.log(), bad); got != 1 {
		t.Errorf("%d requests for %s on mirror 1, want 1", got, bad)
	}
}

func TestFetchTruncatedResumes(t *testing.T) {
	fs := newFixtureSet(t)
	const f = "train-images-idx3-ubyte.gz"
	half := len(fs.gz[f]) / 2
	m := &mirror{files: fs.gz, truncate: map[string]int{f: half}}
	c, urls := newMirrors(t, m)
	dir := t.TempDir()
	if err := fetchSet(context.Background(), fs.spec, dir, fastOpts(c, urls)); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, fs, dir)
	want := []string{f + " ", fmt.Sprintf("%s bytes=%d-", f, half)}
	if got := filterFile(m.log(), f); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests for %s = %q, want %q", f, got, want)
	}
}

func TestFetchTruncatedNoRangeSupport(t *testing.T) {
	fs := newFixtureSet(t)
	const f = "train-images-idx3-ubyte.gz"
	m := &mirror{files: fs.gz, noRange: true, truncate: map[string]int{f: len(fs.gz[f]) / 3}}
	c, urls := newMirrors(t, m)
	dir := t.TempDir()
	if err := fetchSet(context.Background(), fs.spec, dir, fastOpts(c, urls)); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, fs, dir) // the 200 reply replaced the partial data
	if got := filterFile(m.log(), f); len(got) != 2 || !strings.Contains(got[1], "bytes=") {
		t.Errorf("requests for %s = %q, want a plain GET then a Range GET", f, got)
	}
}

func TestFetchStalePartRestarts(t *testing.T) {
	fs := newFixtureSet(t)
	const f = "t10k-images-idx3-ubyte.gz"
	m := &mirror{files: fs.gz}
	c, urls := newMirrors(t, m)
	dir := t.TempDir()
	// A .part from some other file: resuming it yields a file that fails
	// verification, so Fetch must start again from byte 0.
	writeFile(t, dir, f+".part", bytes.Repeat([]byte{0x1f}, 100))
	if err := fetchSet(context.Background(), fs.spec, dir, fastOpts(c, urls)); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, fs, dir)
	want := []string{f + " bytes=100-", f + " "}
	if got := filterFile(m.log(), f); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests for %s = %q, want %q", f, got, want)
	}
}

func TestFetchCompletePartIsPublished(t *testing.T) {
	fs := newFixtureSet(t)
	const f = "t10k-labels-idx1-ubyte.gz"
	m := &mirror{files: fs.gz}
	c, urls := newMirrors(t, m)
	dir := t.TempDir()
	writeFile(t, dir, f+".part", fs.gz[f]) // complete download, killed before the rename
	if err := fetchSet(context.Background(), fs.spec, dir, fastOpts(c, urls)); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, fs, dir)
	if got := filterFile(m.log(), f); len(got) != 1 || !strings.Contains(got[0], "bytes=") {
		t.Errorf("requests for %s = %q, want one Range request answered 416", f, got)
	}
}

func TestFetch404ThenSecondMirror(t *testing.T) {
	fs := newFixtureSet(t)
	m1 := &mirror{files: fs.gz, notFound: true}
	m2 := &mirror{files: fs.gz}
	c, urls := newMirrors(t, m1, m2)
	dir := t.TempDir()
	if err := fetchSet(context.Background(), fs.spec, dir, fastOpts(c, urls)); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, fs, dir)
	if n := len(m1.log()); n != 4 {
		t.Errorf("mirror 1 got %d requests, want 4 (a 404 is not retried)", n)
	}
	if n := len(m2.log()); n != 4 {
		t.Errorf("mirror 2 got %d requests, want 4", n)
	}
}

func TestFetchServerErrorsRetriedThenFail(t *testing.T) {
	fs := newFixtureSet(t)
	m1 := &mirror{files: fs.gz, status: http.StatusServiceUnavailable}
	m2 := &mirror{files: fs.gz, status: http.StatusInternalServerError}
	c, urls := newMirrors(t, m1, m2)
	dir := t.TempDir()
	err := fetchSet(context.Background(), fs.spec, dir, fastOpts(c, urls)) // Retries: 2
	if err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte.gz") || !strings.Contains(err.Error(), "HTTP 503") || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("err = %v", err)
	}
	if n1, n2 := len(m1.log()), len(m2.log()); n1 != 3 || n2 != 3 {
		t.Errorf("requests per mirror = %d, %d; want 3, 3 (1 + 2 retries)", n1, n2)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("dir not empty after failure: %v", ents)
	}
}

func TestFetchStalledServerResumes(t *testing.T) {
	fs := newFixtureSet(t)
	const f = "train-images-idx3-ubyte.gz"
	half := len(fs.gz[f]) / 2
	m := &mirror{files: fs.gz, stall: map[string]int{f: half}}
	c, urls := newMirrors(t, m)
	dir := t.TempDir()
	opt := fastOpts(c, urls)
	opt.StallTimeout = 200 * time.Millisecond
	stallAt(&opt, f, int64(half))
	if err := fetchSet(context.Background(), fs.spec, dir, opt); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, fs, dir)
	want := []string{f + " ", fmt.Sprintf("%s bytes=%d-", f, half)}
	if got := filterFile(m.log(), f); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests for %s = %q, want %q", f, got, want)
	}
}

func TestFetchStallErrorMessage(t *testing.T) {
	fs := newFixtureSet(t)
	const f = "train-images-idx3-ubyte.gz"
	m := &mirror{files: fs.gz, stall: map[string]int{f: 10}}
	c, urls := newMirrors(t, m)
	opt := fastOpts(c, urls)
	opt.Retries = -1
	opt.StallTimeout = 100 * time.Millisecond
	stallAt(&opt, f, 10)
	err := fetchSet(context.Background(), fs.spec, t.TempDir(), opt)
	if err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "no data for 100ms") {
		t.Fatalf("err = %v, want a stall error naming %s", err, f)
	}
	if n := countFile(m.log(), f); n != 1 {
		t.Errorf("%d requests with Retries -1, want 1", n)
	}
}

func TestFetchRejectsHTTPAndUnknown(t *testing.T) {
	err := Fetch(context.Background(), "mnist", t.TempDir(), FetchOptions{Mirrors: []string{"http://example.invalid/"}})
	if err == nil || !strings.Contains(err.Error(), "not an https URL") {
		t.Errorf("err = %v", err)
	}
	if err := Fetch(context.Background(), "cifar", t.TempDir(), FetchOptions{}); err == nil {
		t.Error("Fetch(cifar) succeeded")
	}
	if err := Fetch(context.Background(), "digits", "/nonexistent", FetchOptions{}); err != nil {
		t.Errorf("Fetch(digits) = %v, want nil (embedded)", err)
	}
}

func TestFetchContextCancelled(t *testing.T) {
	fs := newFixtureSet(t)
	// The first request cancels the context; the hour-long backoff after
	// its 503 must end at once (a backoff that ignored the context would
	// hang the test until the binary's -timeout: no clock decides here).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &mirror{files: fs.gz, status: http.StatusServiceUnavailable, onRequest: cancel}
	c, urls := newMirrors(t, m)
	opt := fastOpts(c, urls)
	opt.Backoff = time.Hour
	err := fetchSet(ctx, fs.spec, t.TempDir(), opt)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want one wrapping context.Canceled", err)
	}
	if n := len(m.log()); n != 1 {
		t.Errorf("%d requests, want 1 (the retry waits for the backoff)", n)
	}
}

// TestFetchMNISTFromLocalMirror runs the public Fetch on the real MNIST
// files served from loopback, then loads the result.
func TestFetchMNISTFromLocalMirror(t *testing.T) {
	src := filepath.Join(sharedDataDir(t), "mnist")
	files := map[string][]byte{}
	for _, f := range mnistSpec.files() {
		b, err := os.ReadFile(filepath.Join(src, f.Base+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		files[f.Base+".gz"] = b
	}
	m := &mirror{files: files, truncate: map[string]int{"train-images-idx3-ubyte.gz": 5 << 20}}
	c, urls := newMirrors(t, m)
	dir := t.TempDir()
	if err := Fetch(context.Background(), "mnist", dir, fastOpts(c, urls)); err != nil {
		t.Fatal(err)
	}
	train, test, err := Load("mnist", dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 60000 || test.N != 10000 || train.ClassCounts()[1] != 6742 {
		t.Errorf("N = %d/%d, class-1 count %d", train.N, test.N, train.ClassCounts()[1])
	}
}

func filterFile(log []string, file string) []string {
	var out []string
	for _, l := range log {
		if strings.HasPrefix(l, file+" ") {
			out = append(out, l)
		}
	}
	return out
}

func countFile(log []string, file string) int { return len(filterFile(log, file)) }

// TestFetchOffline: a mirror whose host does not resolve is tried once (no
// retries: a DNS failure does not heal in a second), the error is one short
// line per mirror, and a directory Fetch created is not left behind empty.
func TestFetchOffline(t *testing.T) {
	fs := newFixtureSet(t)
	var dials sync.Map
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			n, _ := dials.LoadOrStore(addr, new(int))
			*n.(*int)++
			host, _, _ := net.SplitHostPort(addr)
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
	}}
	dir := filepath.Join(t.TempDir(), "new")
	err := fetchSet(context.Background(), fs.spec, dir, FetchOptions{
		Mirrors: []string{"https://a.invalid/x", "https://b.invalid/y"}, Client: client, Retries: 5, Backoff: time.Millisecond,
	})
	if err == nil {
		t.Fatal("fetch succeeded offline")
	}
	msg := err.Error()
	for _, want := range []string{"cannot resolve a.invalid (offline?)", "cannot resolve b.invalid (offline?)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Count(msg, "a.invalid") != 2 || strings.Contains(msg, "attempts") { // URL + reason, once
		t.Errorf("error repeats attempts: %q", msg)
	}
	dials.Range(func(k, v any) bool {
		if *v.(*int) != 1 {
			t.Errorf("%v dialled %d times, want 1", k, *v.(*int))
		}
		return true
	})
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s left behind (stat: %v)", dir, err)
	}
}

// TestFetchOfflineRemovesCreatedParents: a failed fetch into a directory
// whose parents do not exist either (the default ~/.cache/dpcalc/mnist on a
// fresh machine) removes every directory it created, and nothing that was
// there before.
func TestFetchOfflineRemovesCreatedParents(t *testing.T) {
	fs := newFixtureSet(t)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
	}}
	root := t.TempDir()
	keep := filepath.Join(root, "home", "keep.txt")
	if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "home", ".cache", "dpcalc", "mnist")
	err := fetchSet(context.Background(), fs.spec, dir, FetchOptions{Mirrors: []string{"https://a.invalid/x"}, Client: client, Retries: -1})
	if err == nil {
		t.Fatal("fetch succeeded offline")
	}
	var left []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if p != root {
			rel, _ := filepath.Rel(root, p)
			left = append(left, rel)
		}
		return nil
	})
	if want := []string{"home", filepath.Join("home", "keep.txt")}; strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("after the failed fetch %s holds %v, want %v", root, left, want)
	}
}
