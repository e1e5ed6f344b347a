package browsertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A minimal W3C WebDriver client for chromedriver: plain HTTP and JSON, so
// the browser test needs no Go dependency beyond the standard library.

const elementKey = "element-6066-11e4-a52e-4f735466cecf"

type driver struct {
	t    *testing.T
	base string // http://127.0.0.1:PORT/session/ID
}

func wdCall(method, url string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", method, url, err, b)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, out.Value)
	}
	return out.Value, nil
}

// newSession starts Chromium through chromedriver at wd.
func newSession(t *testing.T, wd, chromium string, args []string) *driver {
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": args},
	}}}
	v, err := wdCall("POST", wd+"/session", caps)
	if err != nil {
		t.Fatalf("starting a browser session: %v", err)
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(v, &s); err != nil || s.SessionID == "" {
		t.Fatalf("new session: %v %s", err, v)
	}
	d := &driver{t: t, base: wd + "/session/" + s.SessionID}
	t.Cleanup(func() { wdCall("DELETE", d.base, nil) })
	d.call("POST", "/timeouts", map[string]any{"script": 600000, "pageLoad": 120000})
	return d
}

func (d *driver) call(method, path string, body any) json.RawMessage {
	d.t.Helper()
	v, err := wdCall(method, d.base+path, body)
	if err != nil {
		d.t.Fatal(err)
	}
	return v
}

func (d *driver) navigate(url string) {
	d.t.Helper()
	d.call("POST", "/url", map[string]string{"url": url})
}

// exec runs script (a function body) in the page and decodes its return
// value into out (if not nil).
func (d *driver) exec(out any, script string, args ...any) {
	d.t.Helper()
	if args == nil {
		args = []any{}
	}
	v := d.call("POST", "/execute/sync", map[string]any{"script": script, "args": args})
	if out != nil {
		if err := json.Unmarshal(v, out); err != nil {
			d.t.Fatalf("script result %s: %v", v, err)
		}
	}
}

// execAsync runs script, which must call arguments[arguments.length-1]
// with its result.
func (d *driver) execAsync(out any, script string, args ...any) {
	d.t.Helper()
	if args == nil {
		args = []any{}
	}
	v := d.call("POST", "/execute/async", map[string]any{"script": script, "args": args})
	if out != nil {
		if err := json.Unmarshal(v, out); err != nil {
			d.t.Fatalf("script result %s: %v", v, err)
		}
	}
}

func (d *driver) element(css string) string {
	d.t.Helper()
	v := d.call("POST", "/element", map[string]string{"using": "css selector", "value": css})
	var e map[string]string
	if err := json.Unmarshal(v, &e); err != nil || e[elementKey] == "" {
		d.t.Fatalf("element %q: %v %s", css, err, v)
	}
	return e[elementKey]
}

// fill replaces the text of input #id as a user would: clear, then type.
func (d *driver) fill(id, text string) {
	d.t.Helper()
	e := d.element("#" + id)
	d.call("POST", "/element/"+e+"/clear", map[string]any{})
	if text != "" {
		d.call("POST", "/element/"+e+"/value", map[string]string{"text": text})
	}
}

// choose selects the option with value v in select #id by clicking it.
func (d *driver) choose(id, v string) {
	d.t.Helper()
	e := d.element(fmt.Sprintf("#%s option[value=%q]", id, v))
	d.call("POST", "/element/"+e+"/click", map[string]any{})
}

// waitFor polls script (returning a boolean) until true. The limit guards
// against a hung page; it is not a performance bound.
func (d *driver) waitFor(what, script string, args ...any) {
	d.t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var ok bool
		d.exec(&ok, script, args...)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var dump string
			d.exec(&dump, `return document.getElementById("status").textContent + " | shown: " + document.body.dataset.shown + " | cmdline: " + document.getElementById("cmdline").textContent + " | error: " + document.getElementById("error").textContent;`)
			d.t.Fatalf("waiting for %s: gave up; page: %s", what, dump)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func trimQuotes(s string) string { return strings.Trim(s, "'") }
