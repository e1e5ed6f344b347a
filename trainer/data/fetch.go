package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dpcalc/dpcalc/internal/atomicfile"
)

// DefaultRetries is the number of retries per mirror used when
// FetchOptions.Retries is 0.
const DefaultRetries = 3

// FetchOptions configures [Fetch]. The zero value is ready to use.
type FetchOptions struct {
	// Mirrors are base URLs, tried in order; each file is fetched from
	// <mirror>/<file>.gz. They must be https URLs. Nil means the data set's
	// defaults: for MNIST the ossci-datasets S3 mirror and Google's
	// cvdf-datasets bucket; for Fashion-MNIST the upstream repository.
	Mirrors []string
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// Retries is how many times a transient failure (network error, a
	// truncated body, HTTP 408, 429 or 5xx) is retried on the same mirror
	// before moving to the next; 0 means DefaultRetries and a negative value
	// means no retries. A permanent failure (other 4xx) or a file that fails
	// verification moves to the next mirror at once.
	Retries int
	// Backoff is the wait before the first retry; it doubles with every
	// further retry, up to 30 s. 0 means 1 s.
	Backoff time.Duration
	// StallTimeout aborts an attempt (a transient failure, so it is retried
	// and resumed) when no response or no body bytes arrive for this long.
	// 0 means 60 s.
	StallTimeout time.Duration
	// Progress, if set, is called as bytes of each file arrive with the
	// compressed file's name (e.g. "train-images-idx3-ubyte.gz"), the bytes
	// so far and the total, or -1 if the server did not say.
	Progress func(file string, done, total int64)

	// stallTimer starts the stall watchdog (time.AfterFunc when nil); tests
	// replace it by one that fires when their server has stalled, not by
	// the clock.
	stallTimer func(d time.Duration, f func()) stopResetter
}

// stopResetter is the part of *time.Timer the stall watchdog uses.
type stopResetter interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// Fetch downloads the four gzip-compressed idx files of the named data set
// ("mnist" or "fashion-mnist"; "digits" is embedded and needs nothing) into
// dir (dir "" means [DefaultDir](name)), creating it if needed.
//
// A file already present in dir (compressed or not) whose decompressed
// content has the expected SHA-256 is skipped. Otherwise the file is
// downloaded into <file>.gz.part; an existing .part is resumed with an HTTP
// Range request, and the download restarts from scratch if the server
// ignores the range or the completed file fails verification. A file is
// renamed to its final name only after its decompressed SHA-256 matches and
// the data is fsynced, so the final path never holds unverified data. A .part
// left by an interrupted transfer is kept so that the next Fetch resumes it.
//
// Concurrent Fetch calls on the same directory are not supported.
func Fetch(ctx context.Context, name, dir string, opt FetchOptions) error {
	if name == "digits" {
		return nil
	}
	spec, ok := specFor(name)
	if !ok {
		return fmt.Errorf("data: unknown data set %q (want digits, mnist or fashion-mnist)", name)
	}
	if dir == "" {
		dir = DefaultDir(name)
	}
	return fetchSet(ctx, spec, dir, opt)
}

func fetchSet(ctx context.Context, spec *setSpec, dir string, opt FetchOptions) error {
	if opt.Mirrors == nil {
		opt.Mirrors = spec.Mirrors
	}
	if len(opt.Mirrors) == 0 {
		return errors.New("data: fetch: no mirrors given")
	}
	for _, m := range opt.Mirrors {
		if !strings.HasPrefix(m, "https://") {
			return fmt.Errorf("data: fetch: mirror %q is not an https URL", m)
		}
	}
	if opt.Client == nil {
		opt.Client = http.DefaultClient
	}
	switch {
	case opt.Retries == 0:
		opt.Retries = DefaultRetries
	case opt.Retries < 0:
		opt.Retries = 0
	}
	if opt.Backoff <= 0 {
		opt.Backoff = time.Second
	}
	if opt.StallTimeout <= 0 {
		opt.StallTimeout = time.Minute
	}
	created := missingDirs(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		removeEmpty(created)
		return fmt.Errorf("data: fetch: %w", err)
	}
	for _, f := range spec.files() {
		if err := fetchFile(ctx, dir, f, &opt); err != nil {
			removeEmpty(created)
			return err
		}
	}
	return nil
}

// missingDirs returns dir and those of its parents that do not exist yet,
// innermost first: what MkdirAll(dir) will create.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// removeEmpty removes the directories a failed fetch created, innermost
// first. os.Remove only removes an empty directory, so a directory holding
// a .part to resume (or anything else) stays, and so do its parents.
func removeEmpty(created []string) {
	for _, d := range created {
		if os.Remove(d) != nil {
			return
		}
	}
}

// permanentError marks a failure that retrying the same mirror cannot fix.
type permanentError struct{ error }

func fetchFile(ctx context.Context, dir string, spec fileSpec, opt *FetchOptions) error {
	file := spec.Base + ".gz"
	final := filepath.Join(dir, file)
	for _, p := range []string{final, filepath.Join(dir, spec.Base)} {
		if _, err := os.Stat(p); err == nil && verifyFile(p, spec) == nil {
			return nil // present and valid
		}
	}
	part := final + ".part"
	// A gzip stream is never much larger than its content; refuse anything
	// far larger so a broken mirror cannot fill the disk.
	limit := spec.Size + spec.Size/64 + 1<<16
	// failures keeps the last failure of each mirror, and how many attempts
	// it took, so that the error stays one readable line.
	var failures []string
	for _, mirror := range opt.Mirrors {
		attempts, last := 0, ""
		url := strings.TrimRight(mirror, "/") + "/" + file
		delay := opt.Backoff
		for attempt := 0; attempt <= opt.Retries; attempt++ {
			if attempt > 0 {
				select {
				case <-ctx.Done():
					return fmt.Errorf("data: fetch %s: %w", file, ctx.Err())
				case <-time.After(delay):
				}
				delay = min(2*delay, 30*time.Second)
			}
			resumed, err := download(ctx, opt, url, part, file, limit)
			if ctx.Err() != nil {
				return fmt.Errorf("data: fetch %s: %w", file, ctx.Err())
			}
			if err == nil {
				verr := verifyFile(part, spec)
				if verr == nil {
					if err := atomicfile.Publish(part, final); err != nil {
						return fmt.Errorf("data: fetch %s: %w", file, err)
					}
					return nil
				}
				os.Remove(part)
				reason := verr.Error()
				var fe *fileError
				if errors.As(verr, &fe) {
					reason = fe.Reason
				}
				attempts++
				if resumed {
					// The earlier partial data may be what is wrong: retry
					// from scratch on the same mirror.
					last = "resumed download failed verification (" + reason + ")"
					continue
				}
				last = reason
				break // this mirror serves wrong content
			}
			attempts++
			last = err.Error()
			var perm permanentError
			if errors.As(err, &perm) {
				break
			}
		}
		if attempts > 1 {
			last += fmt.Sprintf(" (%d attempts)", attempts)
		}
		failures = append(failures, url+": "+last)
	}
	return fmt.Errorf("data: fetch %s into %s failed: %s", file, dir, strings.Join(failures, "; "))
}

// download fetches url into part, resuming from part's current length when it
// exists. It returns nil when the whole body arrived; resumed reports whether
// part's earlier content was kept.
func download(ctx context.Context, opt *FetchOptions, url, part, file string, limit int64) (resumed bool, err error) {
	var offset int64
	if fi, err := os.Stat(part); err == nil {
		offset = fi.Size()
	}
	// A watchdog cancels the attempt when no progress is made for
	// StallTimeout; every write to the file re-arms it.
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stalled := fmt.Errorf("no data for %v", opt.StallTimeout)
	afterFunc := opt.stallTimer
	if afterFunc == nil {
		afterFunc = func(d time.Duration, f func()) stopResetter { return time.AfterFunc(d, f) }
	}
	watchdog := afterFunc(opt.StallTimeout, func() { cancel(stalled) })
	defer watchdog.Stop()
	defer func() {
		if err != nil && context.Cause(actx) == stalled {
			err = stalled
		}
	}()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, url, nil)
	if err != nil {
		return false, permanentError{err}
	}
	// Ask for the bytes as stored: with Go's default transparent
	// decompression a server that labels .gz files Content-Encoding: gzip
	// would hand over different bytes than a later Range request.
	req.Header.Set("Accept-Encoding", "identity")
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	resp, err := opt.Client.Do(req)
	if err != nil {
		// A host name that does not resolve (offline, or a mistyped
		// mirror) will not resolve on a retry a second later either.
		var dns *net.DNSError
		if errors.As(err, &dns) && dns.IsNotFound {
			return false, permanentError{fmt.Errorf("cannot resolve %s (offline?)", dns.Name)}
		}
		var ue *neturl.Error // drop the "Get <url>:" prefix the caller already prints
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return false, err
	}
	defer resp.Body.Close()

	total := int64(-1)
	flags := os.O_WRONLY | os.O_CREATE
	switch {
	case resp.StatusCode == http.StatusOK:
		offset = 0
		flags |= os.O_TRUNC
		total = resp.ContentLength
	case resp.StatusCode == http.StatusPartialContent && offset > 0:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			os.Remove(part)
			return false, fmt.Errorf("unexpected Content-Range %q for a request from byte %d; restarting", resp.Header.Get("Content-Range"), offset)
		}
		flags |= os.O_APPEND
		total = size
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && offset > 0:
		// The .part is at least as long as the file: it may be complete.
		return true, nil
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return false, fmt.Errorf("HTTP %s", resp.Status)
	default:
		return false, permanentError{fmt.Errorf("HTTP %s", resp.Status)}
	}
	if total > limit {
		return false, permanentError{fmt.Errorf("server announces %d bytes, more than the %d a compressed copy can have", total, limit)}
	}
	f, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return false, permanentError{err}
	}
	w := &progressWriter{w: f, file: file, done: offset, total: total, fn: opt.Progress, onWrite: func() { watchdog.Reset(opt.StallTimeout) }}
	n, err := io.Copy(w, io.LimitReader(resp.Body, limit-offset+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return false, fmt.Errorf("after %d bytes: %w", offset+n, err)
	case offset+n > limit:
		os.Remove(part)
		return false, permanentError{fmt.Errorf("body exceeds %d bytes, more than a compressed copy can have", limit)}
	case total >= 0 && offset+n != total:
		return false, fmt.Errorf("body ended after %d of %d bytes", offset+n, total)
	}
	return offset > 0, nil
}

// parseContentRange parses "bytes start-end/size"; size is -1 for "*".
func parseContentRange(s string) (start, size int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, sz, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	a, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	size = -1
	if sz != "*" {
		if size, err = strconv.ParseInt(sz, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, size, true
}

type progressWriter struct {
	w           io.Writer
	file        string
	done, total int64
	fn          func(string, int64, int64)
	onWrite     func()
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	p.onWrite()
	if p.fn != nil {
		p.fn(p.file, p.done, p.total)
	}
	return n, err
}
