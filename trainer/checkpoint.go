package trainer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"os"
	"reflect"
	"slices"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// Checkpoint file layout (all integers little-endian):
//
//	offset  size  field
//	0       8     magic "DPCALCCK"
//	8       4     format version (2)
//	12      8     payload length P
//	20      32    SHA-256 of the payload
//	52      P     payload (encoding/gob of checkpointPayload)
//
// A file whose magic, version, length or checksum does not match is refused
// before any of it is decoded; a checkpoint is never half-read.
//
// Version 2 is version 1 whose payload's ledger may be chained (ledger
// format version 4: it carries the run id and the chain head of the
// ledger that paid for the checkpoint's model, see [accounting.Ledger]).
// Version 1 checkpoints are still read; their ledger is unchained, and a
// resume with Options.RunID makes it the first entries of a chain.
const (
	checkpointMagic   = "DPCALCCK"
	checkpointVersion = 2
	headerSize        = 8 + 4 + 8 + 32
	maxPayload        = 1 << 34
)

// ErrCorruptCheckpoint is matched by errors.Is for a checkpoint that is
// truncated, corrupted, or not a checkpoint.
var ErrCorruptCheckpoint = errors.New("trainer: corrupt checkpoint")

type checkpointPayload struct {
	Config   []byte // JSON
	InDim    int
	ProjDim  int
	Proj     []float32
	Layers   []dense
	RNG      []byte // ChaCha8 state; only with a fixed seed
	Ledger   []byte // JSON
	Step     int
	Perm     []int // shuffle sampling: the current epoch's order
	Alloc    []int // random allocation: the current epoch's, example i's k steps at [i·k, (i+1)·k)
	Elapsed  int64
	History  []byte // JSON
	DataN    int
	DataD    int
	DataHash [32]byte
	// WAL: the run kept a write-ahead ledger (Options.LedgerPath), so a
	// resume must find it. Absent (false) in older checkpoints.
	WAL bool

	sum [32]byte // from the header, not encoded
}

// SaveCheckpoint may be called between steps at any time, e.g. after Run
// returned because its context was cancelled; Run calls it itself every
// Options.CheckpointEvery epochs and when it stops.
//
// SaveCheckpoint writes the run's state — configuration, parameters, the
// privacy ledger (every step spent so far), step counter, history and, for a
// fixed-seed run, the random stream's position — to path atomically
// (temporary file in the same directory, fsync, rename).
//
// The random stream is saved only when Config.Seed is set, so a seeded run
// resumes bit-identically. Without a seed the stream came from crypto/rand
// and is not written: whoever read it from the file could predict the noise
// of the remaining steps. Such a run reseeds from crypto/rand on resume.
//
// With Options.LedgerPath set, the write-ahead ledger is written first, so
// it is never behind a checkpoint.
func (t *Trainer) SaveCheckpoint(path string) error {
	if t.can != nil {
		return errCanaryCheckpoint
	}
	if err := t.commitLedger(true); err != nil {
		return err
	}
	cfgJSON, err := json.Marshal(t.cfg)
	if err != nil {
		return err
	}
	ledJSON, err := json.Marshal(t.ledger)
	if err != nil {
		return err
	}
	histJSON, err := json.Marshal(t.history)
	if err != nil {
		return err
	}
	p := checkpointPayload{
		Config: cfgJSON, InDim: t.model.InDim, ProjDim: t.model.ProjDim, Proj: t.model.Proj,
		Layers: t.model.Layers, Ledger: ledJSON, Step: t.step, Perm: t.perm, Alloc: t.alloc, Elapsed: int64(t.elapsed),
		History: histJSON, DataN: t.train.N, DataD: t.train.D, DataHash: datasetHash(t.train),
		WAL: t.opts.LedgerPath != "",
	}
	if t.cfg.Seed != nil {
		if p.RNG, err = t.src.MarshalBinary(); err != nil {
			return err
		}
	}
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(&p); err != nil {
		return fmt.Errorf("trainer: encoding checkpoint: %w", err)
	}
	sum := sha256.Sum256(body.Bytes())
	out := make([]byte, 0, headerSize+body.Len())
	out = append(out, checkpointMagic...)
	out = binary.LittleEndian.AppendUint32(out, checkpointVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(body.Len()))
	out = append(out, sum[:]...)
	out = append(out, body.Bytes()...)
	return writeFileAtomic(path, out)
}

// LoadCheckpoint restores a Trainer saved by SaveCheckpoint. train must be
// the same training set (checked by size and SHA-256 of its contents). The
// restored ledger holds every step already taken, so the privacy cost of the
// resumed run includes them. Call Run to continue.
//
// With Options.LedgerPath set, the write-ahead ledger there is read too (it
// must exist if the checkpoint was written with one). It must extend the
// checkpoint's ledger; if it holds more steps (outputs of steps newer than
// the checkpoint were released before the run stopped), the resumed run
// continues from it: the model goes back to the checkpoint, the ledger
// does not, so the steps redone are paid for twice. A ledger file behind
// the checkpoint's ledger (rolled back), or of another run (another run
// id, or entries that differ), is refused.
func LoadCheckpoint(path string, train *data.Dataset, opts Options) (*Trainer, error) {
	p, cfg, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	if cfg.Canaries != 0 {
		return nil, errCanaryCheckpoint
	}
	led := new(accounting.Ledger)
	if err := json.Unmarshal(p.Ledger, led); err != nil {
		return nil, fmt.Errorf("%w: %s: ledger: %v", ErrCorruptCheckpoint, path, err)
	}
	var hist []Progress
	if err := json.Unmarshal(p.History, &hist); err != nil {
		return nil, fmt.Errorf("%w: %s: history: %v", ErrCorruptCheckpoint, path, err)
	}
	if train == nil {
		return nil, errors.New("trainer: nil training set")
	}
	if p.DataN != train.N || p.DataD != train.D || p.DataHash != datasetHash(train) {
		return nil, fmt.Errorf("trainer: checkpoint %s was trained on a different dataset (%d×%d)", path, p.DataN, p.DataD)
	}
	if err := cfg.Validate(train.N, train.D); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptCheckpoint, path, err)
	}
	if err := checkOptions(&cfg, &opts); err != nil {
		return nil, err
	}
	m := &MLP{InDim: p.InDim, ProjDim: p.ProjDim, Proj: p.Proj, Layers: p.Layers}
	if err := checkShapes(m, &cfg, train); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptCheckpoint, path, err)
	}
	unit := cfg.LedgerUnit(train.N)
	if p.Step < 0 || p.Step > cfg.TotalSteps(train.N) || led.Len() < (p.Step+unit-1)/unit {
		return nil, fmt.Errorf("%w: %s: step %d inconsistent with config and ledger (%d entries)", ErrCorruptCheckpoint, path, p.Step, led.Len())
	}
	if p.Perm != nil {
		if len(p.Perm) != train.N {
			return nil, fmt.Errorf("%w: %s: shuffle order of %d examples, want %d", ErrCorruptCheckpoint, path, len(p.Perm), train.N)
		}
		seen := make([]bool, train.N)
		for _, i := range p.Perm {
			if i < 0 || i >= train.N || seen[i] {
				return nil, fmt.Errorf("%w: %s: shuffle order is not a permutation", ErrCorruptCheckpoint, path)
			}
			seen[i] = true
		}
	}
	if err := checkAllocation(p.Alloc, &cfg, train.N, p.Step); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptCheckpoint, path, err)
	}
	if led.RunID != "" && opts.RunID != "" && led.RunID != opts.RunID {
		return nil, fmt.Errorf("trainer: checkpoint %s is of run %s, not of run %s", path, led.RunID, opts.RunID)
	}
	committed := -1
	if opts.LedgerPath != "" {
		wal, err := accounting.LoadLedger(opts.LedgerPath)
		switch {
		case errors.Is(err, os.ErrNotExist) && !p.WAL:
			// A checkpoint from a run without a ledger file: its own
			// ledger is all there is.
		case errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("trainer: checkpoint %s was written with the write-ahead ledger %s, which is missing; without it the steps released after the checkpoint are not counted", path, opts.LedgerPath)
		case err != nil:
			return nil, fmt.Errorf("trainer: write-ahead ledger: %w", err)
		case wal.RunID != led.RunID && led.RunID != "":
			return nil, fmt.Errorf("trainer: write-ahead ledger %s is of run %s, checkpoint %s of run %s: they belong to different runs", opts.LedgerPath, orNone(wal.RunID), path, led.RunID)
		case wal.Len() < led.Len():
			return nil, fmt.Errorf("trainer: write-ahead ledger %s (%d entries) is behind the ledger of checkpoint %s (%d entries): it was rolled back or replaced; the checkpoint's steps are not all in it", opts.LedgerPath, wal.Len(), path, led.Len())
		case !ledgerExtends(wal, led):
			return nil, fmt.Errorf("trainer: write-ahead ledger %s (%d entries) does not extend the ledger of checkpoint %s (%d entries): they belong to different runs", opts.LedgerPath, wal.Len(), path, led.Len())
		default:
			if wal.RunID != "" && opts.RunID != "" && wal.RunID != opts.RunID {
				return nil, fmt.Errorf("trainer: write-ahead ledger %s is of run %s, not of run %s", opts.LedgerPath, wal.RunID, opts.RunID)
			}
			led = wal
			committed = wal.Len()
		}
	}
	if led.RunID == "" && opts.RunID != "" {
		// An unchained ledger from before chains: it becomes the first
		// entries of the chain, written at the next commit.
		led.RunID = opts.RunID
		committed = -1
	}
	var src *mrand.ChaCha8
	if cfg.Seed != nil {
		src = new(mrand.ChaCha8)
		if err := src.UnmarshalBinary(p.RNG); err != nil {
			return nil, fmt.Errorf("%w: %s: rng state: %v", ErrCorruptCheckpoint, path, err)
		}
	} else if src, err = newSource(nil); err != nil {
		return nil, err
	}
	return &Trainer{
		cfg: cfg, opts: opts, train: train, base: train, model: m, src: src, rng: mrand.New(src),
		ledger: led, step: p.Step, perm: p.Perm, alloc: p.Alloc, elapsed: time.Duration(p.Elapsed), history: hist,
		committed: committed,
	}, nil
}

// checkAllocation checks a checkpoint's random allocation: present exactly
// when the run draws one and is inside an epoch (a resume mid-epoch draws
// the rest of the epoch's lots from it, which the ledger has paid for),
// with k distinct steps in [0, t) for each of the n examples.
func checkAllocation(a []int, cfg *Config, n, step int) error {
	if !cfg.allocated() {
		if a != nil {
			return errors.New("random allocation in a run that does not draw one")
		}
		return nil
	}
	k, t := cfg.allocK(), cfg.StepsPerEpoch(n)
	if a == nil {
		if step%t != 0 {
			return fmt.Errorf("step %d is inside an epoch but the epoch's random allocation is missing", step)
		}
		return nil
	}
	if len(a) != n*k {
		return fmt.Errorf("random allocation of %d entries, want k·N = %d", len(a), n*k)
	}
	for i := range n {
		s := a[i*k : (i+1)*k]
		for j, v := range s {
			if v < 0 || v >= t || slices.Contains(s[:j], v) {
				return fmt.Errorf("random allocation of example %d is not %d distinct steps in [0, %d)", i, k, t)
			}
		}
	}
	return nil
}

func orNone(id string) string {
	if id == "" {
		return "none (an unchained ledger)"
	}
	return id
}

// CheckpointInfo is what [ReadCheckpointInfo] reports of a checkpoint
// without a data set.
type CheckpointInfo struct {
	Config Config
	// Step is the number of steps the checkpoint's model has taken.
	Step int
	// Ledger is the ledger that paid for the model (RunID empty for a
	// checkpoint from before chained ledgers).
	Ledger *accounting.Ledger
	// WAL: the run kept a write-ahead ledger file beside the checkpoint.
	WAL bool
	// Checksum is the SHA-256 of the payload, from the header: equal for
	// copies (and links) of one checkpoint file.
	Checksum [32]byte
}

// ReadCheckpointInfo verifies the checkpoint at path as [LoadCheckpoint]
// does and returns its configuration, step and ledger.
func ReadCheckpointInfo(path string) (*CheckpointInfo, error) {
	p, cfg, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	led := new(accounting.Ledger)
	if err := json.Unmarshal(p.Ledger, led); err != nil {
		return nil, fmt.Errorf("%w: %s: ledger: %v", ErrCorruptCheckpoint, path, err)
	}
	return &CheckpointInfo{Config: cfg, Step: p.Step, Ledger: led, WAL: p.WAL, Checksum: p.sum}, nil
}

// ledgerExtends reports whether long is short followed by zero or more
// entries: every segment of short but the last is in long unchanged, and
// the last has the same event in long with at least its count.
func ledgerExtends(long, short *accounting.Ledger) bool {
	a, b := long.Segments, short.Segments
	if len(b) == 0 {
		return true
	}
	if len(a) < len(b) {
		return false
	}
	for i := range b {
		if !reflect.DeepEqual(a[i].Event, b[i].Event) {
			return false
		}
		if i < len(b)-1 && a[i].Count != b[i].Count || a[i].Count < b[i].Count {
			return false
		}
	}
	return true
}

// CheckpointConfig returns the configuration saved in the checkpoint at
// path, verifying the file as [LoadCheckpoint] does but without a data set:
// a caller can choose the Options (accountant, report δ) before loading.
func CheckpointConfig(path string) (Config, error) {
	_, cfg, err := readCheckpoint(path)
	return cfg, err
}

// readCheckpoint reads and verifies the file and decodes its payload and
// configuration.
func readCheckpoint(path string) (*checkpointPayload, Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Config{}, fmt.Errorf("trainer: %w", err)
	}
	defer f.Close()
	var hdr [headerSize]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return nil, Config{}, fmt.Errorf("%w: %s: header: %v", ErrCorruptCheckpoint, path, err)
	}
	if string(hdr[:8]) != checkpointMagic {
		return nil, Config{}, fmt.Errorf("%w: %s: not a dpcalc checkpoint (bad magic)", ErrCorruptCheckpoint, path)
	}
	if v := binary.LittleEndian.Uint32(hdr[8:12]); v != checkpointVersion && v != 1 {
		return nil, Config{}, fmt.Errorf("%w: %s: format version %d, want %d (or 1)", ErrCorruptCheckpoint, path, v, checkpointVersion)
	}
	n := binary.LittleEndian.Uint64(hdr[12:20])
	if n > maxPayload {
		return nil, Config{}, fmt.Errorf("%w: %s: payload length %d too large", ErrCorruptCheckpoint, path, n)
	}
	// Check the claimed length against the file before allocating, so a
	// corrupted length field cannot make us allocate gigabytes.
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && uint64(st.Size()) != headerSize+n {
		return nil, Config{}, fmt.Errorf("%w: %s: header claims a %d-byte payload but the file has %d bytes after the header",
			ErrCorruptCheckpoint, path, n, st.Size()-headerSize)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(f, body); err != nil {
		return nil, Config{}, fmt.Errorf("%w: %s: truncated: payload of %d bytes: %v", ErrCorruptCheckpoint, path, n, err)
	}
	if extra, _ := f.Read(make([]byte, 1)); extra != 0 {
		return nil, Config{}, fmt.Errorf("%w: %s: trailing bytes after payload", ErrCorruptCheckpoint, path)
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], hdr[20:52]) {
		return nil, Config{}, fmt.Errorf("%w: %s: checksum mismatch", ErrCorruptCheckpoint, path)
	}
	var p checkpointPayload
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&p); err != nil {
		return nil, Config{}, fmt.Errorf("%w: %s: %v", ErrCorruptCheckpoint, path, err)
	}
	copy(p.sum[:], hdr[20:52])
	var cfg Config
	if err := json.Unmarshal(p.Config, &cfg); err != nil {
		return nil, Config{}, fmt.Errorf("%w: %s: config: %v", ErrCorruptCheckpoint, path, err)
	}
	return &p, cfg, nil
}

// Resume loads the checkpoint at path and continues the run to its
// configured end (or its privacy budget); see [LoadCheckpoint] and
// [Trainer.Run].
func Resume(ctx context.Context, path string, train, test *data.Dataset, opts Options) (*Result, error) {
	t, err := LoadCheckpoint(path, train, opts)
	if err != nil {
		return nil, err
	}
	return t.Run(ctx, test)
}

func checkShapes(m *MLP, cfg *Config, ds *data.Dataset) error {
	if m.InDim != ds.D || m.ProjDim != cfg.PCADim || len(m.Proj) != m.InDim*m.ProjDim {
		return fmt.Errorf("input shape %d→%d does not match", m.InDim, m.ProjDim)
	}
	if len(m.Layers) != len(cfg.Hidden)+1 {
		return fmt.Errorf("%d layers, config says %d", len(m.Layers), len(cfg.Hidden)+1)
	}
	in := m.InDim
	if m.ProjDim > 0 {
		in = m.ProjDim
	}
	for i, l := range m.Layers {
		out := ds.Classes
		if i < len(cfg.Hidden) {
			out = cfg.Hidden[i]
		}
		if l.In != in || l.Out != out || len(l.W) != in*out || len(l.B) != out {
			return fmt.Errorf("layer %d has shape %d×%d, want %d×%d", i, l.In, l.Out, in, out)
		}
		in = out
	}
	return nil
}

// datasetHash is SHA-256 over N, D, Classes, the float32 bits of X and Y.
func datasetHash(ds *data.Dataset) [32]byte {
	h := sha256.New()
	var b [8]byte
	for _, v := range []int{ds.N, ds.D, ds.Classes} {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	buf := make([]byte, 0, 4096)
	for _, x := range ds.X {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		if len(buf) >= 4096 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	h.Write(ds.Y)
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// writeFileAtomic writes b to path atomically (temp file in the same
// directory, fsync, rename, directory fsync; see internal/atomicfile), mode
// 0600: a reader sees the old file or the complete new one.
func writeFileAtomic(path string, b []byte) error {
	if err := atomicfile.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// SaveResult writes r as indented JSON to path atomically.
func SaveResult(path string, r *Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("trainer: encoding result: %w", err)
	}
	return writeFileAtomic(path, append(b, '\n'))
}
