package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/killtest"
	"github.com/dpcalc/dpcalc/trainer"
)

const booksHelperEnv = "DPCALC_BOOKS_ARGS"

// TestBooksHelper is the child process of TestBooksHarness: it runs the
// CLI with the arguments in $DPCALC_BOOKS_ARGS (separated by newlines),
// cancelled by SIGINT and SIGTERM as the binary is, and exits with its
// code.
func TestBooksHelper(t *testing.T) {
	v := os.Getenv(booksHelperEnv)
	if v == "" {
		t.Skip("helper process only")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var o bytes.Buffer
	code := runContext(ctx, strings.Split(v, "\n"), &o, os.Stderr)
	stop()
	os.Exit(code)
}

// booksState is what the harness knows the run has done: the longest
// ledger it wrote, the log lines released, and the steps those lines
// released over all sessions.
type booksState struct {
	ledger   *accounting.Ledger
	log      []byte
	released int // steps released, summed over sessions
	epochs   int // the largest --epochs asked for
}

// TestBooksHarness drives one training run through rounds of kills
// (SIGKILL at random moments), interrupts (SIGINT, SIGTERM), rollbacks
// (an older checkpoint and ledger copied back, with or without the log),
// overwrites (a new run on the run's path), links (the log onto the
// ledger or checkpoint, directly or by link) and concurrent resumes of
// hard-linked and copied files. After every round it checks the books:
//
//   - the ledger file extends the one of the round before (it never
//     shrinks, is never replaced, never forks);
//   - every log line released is held by the ledger on disk (its
//     ledger_len and ledger_head), and the log only grows;
//   - the steps released, summed over all sessions (each session's last
//     line's step minus the step it started from), are at most the
//     ledger's entries: nothing is released that the ledger does not pay;
//   - a refused action changes no file, and an interrupt leaves either
//     nothing or a state the next resume continues, with advice that
//     matches the files.
//
// 10 rounds by default, 120 with DPCALC_LONG=1; the moments of the kills
// vary, the verdicts do not depend on them.
func TestBooksHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	rounds := 10
	if os.Getenv("DPCALC_LONG") != "" {
		rounds = 120
	}
	dir := t.TempDir()
	ck, logp := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "log.jsonl")
	lp := ledgerPath(ck)
	rng := rand.New(rand.NewPCG(21, uint64(rounds)))
	st := &booksState{}
	var snaps [][3][]byte // earlier (checkpoint, ledger, log) contents
	counts := map[string]int{}

	args := func(ckPath, logPath string, epochs int, resume bool) []string {
		a := booksRun(ckPath, strconv.Itoa(epochs), "--log-json", logPath)
		if resume {
			a = append(a, "--resume")
		}
		return a
	}
	// next returns the arguments that continue the run by a few epochs.
	next := func() []string {
		st.epochs += 1 + rng.IntN(4)
		return args(ck, logp, st.epochs, fileExists(ck) || fileExists(lp))
	}
	startStep := func(path string) int {
		if info, err := trainer.ReadCheckpointInfo(path); err == nil {
			return info.Step
		}
		return 0
	}
	// session accounts for the lines a session appended to the log.
	session := func(r int, before []byte, start int) {
		after, _ := os.ReadFile(logp)
		if !bytes.HasPrefix(after, before) {
			t.Fatalf("round %d: the log lost lines (%d bytes before, %d after, not a prefix)", r, len(before), len(after))
		}
		lines := parseLines(t, after[len(before):])
		if len(lines) > 0 {
			st.released += lines[len(lines)-1].Step - start
		}
	}
	saved := func() [3][]byte {
		var s [3][]byte
		for i, p := range []string{ck, lp, logp} {
			s[i], _ = os.ReadFile(p)
		}
		return s
	}
	restore := func(s [3][]byte) {
		for i, p := range []string{ck, lp, logp} {
			os.Remove(p)
			if s[i] != nil {
				if err := os.WriteFile(p, s[i], 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	unchanged := func(r int, what string, s [3][]byte) {
		if now := saved(); !bytes.Equal(now[0], s[0]) || !bytes.Equal(now[1], s[1]) || !bytes.Equal(now[2], s[2]) {
			t.Fatalf("round %d: the refused %s changed the run's files", r, what)
		}
	}
	// child runs the CLI in a helper process, stopping it with sig after
	// delay (sig 0: let it finish).
	child := func(a []string, sig syscall.Signal, delay time.Duration) (int, syscall.Signal, string) {
		h := killtest.Start(t, "^TestBooksHelper$", booksHelperEnv, strings.Join(a, "\n"))
		if sig != 0 {
			time.Sleep(delay)
			h.Signal(sig)
		}
		return h.Wait()
	}
	for r := range rounds {
		before := saved()
		action := []string{"kill", "kill", "signal", "rollback", "overwrite", "link", "concurrent"}[rng.IntN(7)]
		if st.ledger == nil && action != "signal" {
			action = "kill" // nothing to roll back, overwrite or link yet
		}
		switch action {
		case "kill", "signal":
			sig := syscall.SIGKILL
			if action == "signal" {
				sig = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[rng.IntN(2)]
			}
			a := next()
			start := startStep(ck)
			code, killed, stderr := child(a, sig, time.Duration(rng.IntN(300))*time.Millisecond)
			switch {
			case killed != 0:
			case code == 0:
			case code == 130 && sig != syscall.SIGKILL:
				// The advice must match the files.
				if strings.Contains(stderr, "continue with --resume") && !(fileExists(ck) && fileExists(lp)) {
					t.Fatalf("round %d: advised --resume, but checkpoint %v, ledger %v: %s", r, fileExists(ck), fileExists(lp), stderr)
				}
				if strings.Contains(stderr, "no checkpoint or ledger was written") && (fileExists(ck) || fileExists(lp)) {
					t.Fatalf("round %d: said nothing was written, but checkpoint %v, ledger %v", r, fileExists(ck), fileExists(lp))
				}
			default:
				// Every state an interruption leaves must be continued.
				t.Fatalf("round %d: %s exit %d: %s", r, strings.Join(a, " "), code, stderr)
			}
			session(r, before[2], start)
			action += fmt.Sprintf("(exit %d, signal %d)", code, killed)
		case "rollback":
			if len(snaps) == 0 {
				continue
			}
			old := snaps[rng.IntN(len(snaps))]
			withLog := rng.IntN(2) == 0
			restore([3][]byte{old[0], old[1], map[bool][]byte{true: old[2], false: before[2]}[withLog]})
			rolled := saved()
			a := next()
			start := startStep(ck)
			_, stderr, code := runCLI(a...)
			if code == 0 {
				if !bytes.Equal(old[1], before[1]) {
					t.Fatalf("round %d: a rollback to a %d-byte ledger (the run's is %d bytes) was resumed: %s", r, len(old[1]), len(before[1]), stderr)
				}
				session(r, rolled[2], start)
			} else {
				if code != 2 || !strings.Contains(stderr, "does not hold the state") {
					t.Fatalf("round %d: rollback refused with exit %d: %s", r, code, stderr)
				}
				unchanged(r, "rollback", rolled)
				restore(before) // the user puts the run's files back
			}
			action += fmt.Sprintf("(log too %v, exit %d)", withLog, code)
		case "overwrite":
			a := args(ck, logp, 1+rng.IntN(3), false)
			if _, stderr, code := runCLI(a...); code != 2 || !strings.Contains(stderr, "never replaces a ledger") {
				t.Fatalf("round %d: a new run on the run's path: exit %d: %s", r, code, stderr)
			}
			unchanged(r, "overwrite", before)
		case "link":
			target := []string{lp, ck, ck + ".lock"}[rng.IntN(3)]
			l := filepath.Join(dir, "linked.jsonl")
			os.Remove(l)
			switch rng.IntN(3) {
			case 0:
				l = target
			case 1:
				os.Symlink(filepath.Base(target), l)
			case 2:
				os.Link(target, l)
			}
			a := args(ck, l, st.epochs+1, true)
			if _, stderr, code := runCLI(a...); code != 2 || !strings.Contains(stderr, "must be distinct") {
				t.Fatalf("round %d: --log-json %s (onto %s): exit %d: %s", r, l, target, code, stderr)
			}
			unchanged(r, "link", before)
			os.Remove(filepath.Join(dir, "linked.jsonl"))
		case "concurrent":
			// Two resumes at once: the run, and a copy of its files in
			// another directory (hard links, or plain copies).
			cdir := filepath.Join(dir, fmt.Sprintf("copy%d", r))
			os.Mkdir(cdir, 0o755)
			cck, clog := filepath.Join(cdir, "run.ckpt"), filepath.Join(cdir, "log.jsonl")
			hard := rng.IntN(2) == 0
			for i, p := range []string{ck, lp, logp} {
				q := []string{cck, ledgerPath(cck), clog}[i]
				if !fileExists(p) {
					continue
				}
				if hard {
					os.Link(p, q)
				} else {
					os.WriteFile(q, before[i], 0o600)
				}
			}
			start := startStep(ck)
			st.epochs += 1 + rng.IntN(3)
			h1 := killtest.Start(t, "^TestBooksHelper$", booksHelperEnv, strings.Join(args(ck, logp, st.epochs, true), "\n"))
			h2 := killtest.Start(t, "^TestBooksHelper$", booksHelperEnv, strings.Join(args(cck, clog, st.epochs, true), "\n"))
			c1, _, e1 := h1.Wait()
			c2, _, e2 := h2.Wait()
			if c1 == 0 && c2 == 0 {
				t.Fatalf("round %d: both resumes of one run succeeded (hard links %v):\n%s\n%s", r, hard, e1, e2)
			}
			for i, c := range []int{c1, c2} {
				e := []string{e1, e2}[i]
				if c != 0 && (c != 2 || !(strings.Contains(e, "in use by another run") || strings.Contains(e, "run registry"))) {
					t.Fatalf("round %d: resume %d: exit %d: %s", r, i+1, c, e)
				}
			}
			if c2 == 0 {
				// The copy went on: it is the run now.
				for i, p := range []string{cck, ledgerPath(cck), clog} {
					if err := os.Rename(p, []string{ck, lp, logp}[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			session(r, before[2], start)
			os.RemoveAll(cdir)
			action += fmt.Sprintf("(hard %v, exits %d %d)", hard, c1, c2)
		}
		counts[strings.SplitN(action, "(", 2)[0]]++
		checkBooks(t, r, action, st, ck, logp)
		if s := saved(); s[1] != nil && (len(snaps) == 0 || !bytes.Equal(snaps[len(snaps)-1][1], s[1])) {
			snaps = append(snaps, s)
		}
	}
	if st.ledger == nil {
		st.ledger = new(accounting.Ledger)
	}
	t.Logf("%d rounds %v: ledger %d entries, %d steps released, log %d lines", rounds, counts, st.ledger.Len(), st.released, bytes.Count(st.log, []byte{'\n'}))
}

// checkBooks checks the invariants of TestBooksHarness after round r.
func checkBooks(t *testing.T, r int, action string, st *booksState, ck, logp string) {
	t.Helper()
	led, err := accounting.LoadLedger(ledgerPath(ck))
	if err != nil {
		if st.ledger != nil || fileExists(ledgerPath(ck)) {
			t.Fatalf("round %d (%s): the ledger: %v", r, action, err)
		}
		if fileExists(ck) {
			t.Fatalf("round %d (%s): a checkpoint without its ledger", r, action)
		}
		led = new(accounting.Ledger)
	}
	if st.ledger != nil {
		m, _ := st.ledger.Mark()
		if err := led.Covers(m); err != nil {
			t.Fatalf("round %d (%s): the ledger (%d entries) does not extend the previous round's (%d): %v", r, action, led.Len(), m.Len, err)
		}
	}
	lg, _ := os.ReadFile(logp)
	if !bytes.HasPrefix(lg, st.log) {
		t.Fatalf("round %d (%s): the log is not an extension of the previous round's", r, action)
	}
	for i, l := range parseLines(t, lg) {
		if err := led.Covers(accounting.Mark{Len: l.LedgerLen, Head: l.LedgerHead}); err != nil {
			t.Fatalf("round %d (%s): log line %d (step %d, ledger_len %d) is not held by the ledger: %v", r, action, i+1, l.Step, l.LedgerLen, err)
		}
	}
	if st.released > led.Len() {
		t.Fatalf("round %d (%s): %d steps released over all sessions, the ledger pays %d", r, action, st.released, led.Len())
	}
	st.log = lg
	if fileExists(ledgerPath(ck)) {
		st.ledger = led
	}
}

type harnessLine struct {
	Step       int    `json:"step"`
	LedgerLen  int    `json:"ledger_len"`
	LedgerHead string `json:"ledger_head"`
}

func parseLines(t *testing.T, b []byte) []harnessLine {
	t.Helper()
	var out []harnessLine
	for _, s := range bytes.Split(bytes.TrimSpace(b), []byte{'\n'}) {
		if len(s) == 0 {
			continue
		}
		var l harnessLine
		if err := json.Unmarshal(s, &l); err != nil {
			t.Fatalf("log line %q: %v", s, err)
		}
		out = append(out, l)
	}
	return out
}
