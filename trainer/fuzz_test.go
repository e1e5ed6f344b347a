package trainer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/trainer/data"
)

// fuzzTrain is the training set every checkpoint fuzz input is loaded
// against: 60 examples, 4 features, 2 classes.
func fuzzTrain() *data.Dataset { return blobs(60, 4, 2, 0.1, 5) }

// validCheckpoint trains a tiny model for one epoch (or not at all) and
// returns its checkpoint file.
func validCheckpoint(tb testing.TB, cfg Config, run bool) []byte {
	tb.Helper()
	tr, err := New(cfg, fuzzTrain(), Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if run {
		if _, err := tr.Run(context.Background(), nil); err != nil {
			tb.Fatal(err)
		}
	}
	p := filepath.Join(tb.TempDir(), "c.ckpt")
	if err := tr.SaveCheckpoint(p); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

var fuzzCfg = Config{Method: MethodDPSGD, Hidden: []int{5}, LotSize: 20, Epochs: 2, NoiseMultiplier: 1, Seed: u64(7)}

// frame wraps a payload in a checkpoint header with the right length and
// checksum, so that the fuzzer reaches the gob decoder and the checks after
// it (which a checksum otherwise shields from random bytes).
func frame(payload []byte) []byte {
	sum := sha256.Sum256(payload)
	out := append([]byte(checkpointMagic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(out[8:], checkpointVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(payload)))
	out = append(out, sum[:]...)
	return append(out, payload...)
}

// checkLoad loads b as a checkpoint and checks the invariants: an error
// leaves no trainer, is one line, and is ErrCorruptCheckpoint unless it is
// about the data set or the options; a checkpoint that loads is
// self-consistent and survives a save/load round trip unchanged.
func checkLoad(t *testing.T, dir string, b []byte) {
	t.Helper()
	p := filepath.Join(dir, "f.ckpt")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	train := fuzzTrain()
	tr, err := LoadCheckpoint(p, train, Options{})
	if err != nil {
		if tr != nil {
			t.Fatalf("LoadCheckpoint returned a trainer with error %v", err)
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "trainer: ") {
			t.Fatalf("error %q is not one line prefixed \"trainer: \"", msg)
		}
		var fe *FieldError
		if !errors.Is(err, ErrCorruptCheckpoint) && !strings.Contains(msg, "different dataset") && !errors.As(err, &fe) {
			t.Fatalf("error %v is neither ErrCorruptCheckpoint, a dataset mismatch nor a FieldError", err)
		}
		return
	}
	cfg := tr.Config()
	if err := cfg.Validate(train.N, train.D); err != nil {
		t.Fatalf("loaded config does not validate: %v", err)
	}
	if err := checkShapes(tr.model, &cfg, train); err != nil {
		t.Fatalf("loaded model has wrong shapes: %v", err)
	}
	if s := tr.Step(); s < 0 || s > cfg.TotalSteps(train.N) || tr.ledger.Len() < s {
		t.Fatalf("loaded step %d, total %d, ledger %d", s, cfg.TotalSteps(train.N), tr.ledger.Len())
	}
	q := filepath.Join(dir, "again.ckpt")
	if err := tr.SaveCheckpoint(q); err != nil {
		t.Fatalf("re-saving a loaded checkpoint: %v", err)
	}
	tr2, err := LoadCheckpoint(q, train, Options{})
	if err != nil {
		t.Fatalf("re-loading a re-saved checkpoint: %v", err)
	}
	if !reflect.DeepEqual(tr2.model, tr.model) || !tr2.ledger.Equal(tr.ledger) || tr2.step != tr.step ||
		!reflect.DeepEqual(tr2.cfg, tr.cfg) || !reflect.DeepEqual(tr2.history, tr.history) {
		t.Fatalf("save/load round trip changed the trainer")
	}
}

// headerLength returns the payload length a checkpoint header claims.
func headerLength(b []byte) uint64 {
	if len(b) < 20 {
		return 0
	}
	return binary.LittleEndian.Uint64(b[12:20])
}

// FuzzLoadCheckpoint loads arbitrary files as checkpoints. With framed set,
// the input is the payload and gets a valid header and checksum, so the
// fuzzer exercises the gob decoding and every consistency check; otherwise
// the input is the whole file (header, length and checksum checks).
func FuzzLoadCheckpoint(f *testing.F) {
	good := validCheckpoint(f, fuzzCfg, true)
	fresh := validCheckpoint(f, Config{Method: MethodNP, Hidden: []int{3, 2}, LotSize: 60, Epochs: 1, PCADim: 2}, false)
	f.Add(good, false)
	f.Add(good[headerSize:], true)
	f.Add(fresh[headerSize:], true)
	f.Add(good[:len(good)/2], false)
	f.Add(good[:headerSize], false)
	f.Add([]byte{}, false)
	f.Add([]byte{}, true)
	f.Add([]byte("DPCALCCK"), false)
	f.Add(append(append([]byte(nil), good...), 0), false)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte, framed bool) {
		if framed {
			b = frame(b)
		}
		checkLoad(t, dir, b)
	})
}

// FuzzCheckpointFields rewrites the fields of a valid checkpoint payload —
// the embedded config, ledger and history JSON, the step counter, shapes,
// RNG state and data-set fingerprint — and re-frames it with a valid
// checksum: a checkpoint that is well-formed but inconsistent must be
// refused, never half-loaded.
func FuzzCheckpointFields(f *testing.F) {
	good := validCheckpoint(f, fuzzCfg, true)
	var p checkpointPayload
	if err := gob.NewDecoder(bytes.NewReader(good[headerSize:])).Decode(&p); err != nil {
		f.Fatal(err)
	}
	f.Add(string(p.Config), string(p.Ledger), string(p.History), p.RNG, int64(p.Step), int64(0), int64(0), uint8(0))
	f.Add(string(p.Config), string(p.Ledger), string(p.History), p.RNG, int64(p.Step+1), int64(0), int64(0), uint8(0))
	f.Add(string(p.Config), string(p.Ledger), string(p.History), p.RNG, int64(-1), int64(0), int64(0), uint8(0))
	f.Add(string(p.Config), `{"format":"dpcalc-ledger","version":1,"segments":[]}`, string(p.History), p.RNG, int64(p.Step), int64(0), int64(0), uint8(0))
	f.Add(strings.Replace(string(p.Config), `"hidden":[5]`, `"hidden":[6]`, 1), string(p.Ledger), "null", p.RNG[:3], int64(p.Step), int64(1), int64(-1), uint8(1))
	f.Add(strings.Replace(string(p.Config), `"seed":7`, `"seed":null`, 1), string(p.Ledger), "[]", []byte(nil), int64(p.Step), int64(0), int64(0), uint8(2))
	f.Add(`{"method":"dpsgd","hidden":[5],"lot_size":20,"epochs":2,"noise_multiplier":0}`, string(p.Ledger), "[]", p.RNG, int64(0), int64(0), int64(0), uint8(4))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, cfg, ledger, history string, rng []byte, step, dIn, dOut int64, mode uint8) {
		q := p // shallow copy; slices below are replaced, not mutated
		q.Config, q.Ledger, q.History, q.RNG = []byte(cfg), []byte(ledger), []byte(history), rng
		q.Step = int(step)
		q.Layers = append([]dense(nil), p.Layers...)
		if mode&1 != 0 && len(q.Layers) > 0 { // reshape the first layer's header (not its data)
			l := q.Layers[0]
			l.In, l.Out = l.In+int(dIn%8), l.Out+int(dOut%8)
			q.Layers[0] = l
		}
		if mode&2 != 0 {
			q.InDim += int(dIn % 8)
			q.ProjDim += int(dOut % 8)
		}
		if mode&4 != 0 {
			q.DataN += int(dIn)
			q.DataD += int(dOut)
		}
		if mode&8 != 0 {
			q.Layers = q.Layers[:len(q.Layers)-1]
		}
		if mode&16 != 0 && len(q.Layers) > 0 { // truncate the first layer's weights
			l := q.Layers[0]
			l.W = l.W[:len(l.W)/2]
			q.Layers[0] = l
		}
		if mode&32 != 0 {
			q.Elapsed = -step
		}
		var body bytes.Buffer
		if err := gob.NewEncoder(&body).Encode(&q); err != nil {
			t.Skip(err)
		}
		checkLoad(t, dir, frame(body.Bytes()))
	})
}

// TestCheckpointTruncationsAndFlips: every truncation point and every
// single-bit flip of a valid checkpoint is refused with
// ErrCorruptCheckpoint (the header checks and the SHA-256 cover every
// byte).
func TestCheckpointTruncationsAndFlips(t *testing.T) {
	good := validCheckpoint(t, fuzzCfg, true)
	dir := t.TempDir()
	p := filepath.Join(dir, "c.ckpt")
	train := fuzzTrain()
	load := func(b []byte) error {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		tr, err := LoadCheckpoint(p, train, Options{})
		if err == nil || tr != nil {
			t.Fatalf("corrupt checkpoint loaded")
		}
		return err
	}
	step := max(1, len(good)/97) // ~100 truncation points, always including the header boundaries
	for n := 0; n < len(good); n += step {
		if err := load(good[:n]); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Errorf("truncated to %d bytes: error %v, want ErrCorruptCheckpoint", n, err)
		}
	}
	for _, n := range []int{8, 12, 20, headerSize - 1, headerSize, headerSize + 1, len(good) - 1} {
		if err := load(good[:n]); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Errorf("truncated to %d bytes: error %v, want ErrCorruptCheckpoint", n, err)
		}
	}
	for i := 0; i < len(good); i += max(1, len(good)/211) {
		for _, bit := range []uint{0, 3, 7} {
			b := append([]byte(nil), good...)
			b[i] ^= 1 << bit
			if err := load(b); !errors.Is(err, ErrCorruptCheckpoint) {
				t.Errorf("bit %d of byte %d flipped: error %v, want ErrCorruptCheckpoint", bit, i, err)
			}
		}
	}
}

// TestCheckpointHugeLengthAllocates: one flipped bit in the header's length
// field (bit 1 of byte 16 adds 2^33, under maxPayload = 2^34) must not make
// LoadCheckpoint allocate 8 GiB before it notices the file is short.
func TestCheckpointHugeLengthAllocates(t *testing.T) {
	good := validCheckpoint(t, fuzzCfg, false)
	b := append([]byte(nil), good...)
	b[16] ^= 1 << 1
	if got := headerLength(b); got < 1<<33 || got > maxPayload {
		t.Fatalf("length field %d after the flip", got)
	}
	p := filepath.Join(t.TempDir(), "c.ckpt")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := LoadCheckpoint(p, fuzzTrain(), Options{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorruptCheckpoint) {
		t.Errorf("error %v, want ErrCorruptCheckpoint", err)
	}
	// LoadCheckpoint compares the claimed length with the file size before
	// allocating; the file here is about a kilobyte.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("LoadCheckpoint allocated %d KiB for a %d-byte file whose length field claims 2^33 bytes", grew>>10, len(b))
	}
}

// TestConfigJSONValidate: a config decoded from JSON either validates or
// names a field; decoding never panics (FuzzConfigJSON explores further).
func FuzzConfigJSON(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"method":"dpsgd","hidden":[5],"lot_size":20,"epochs":2,"noise_multiplier":1}`,
		`{"method":"np","hidden":[],"lot_size":1,"epochs":1}`,
		`{"method":"dpd","hidden":[65536,65536],"lot_size":60,"epochs":1048576,"noise_multiplier":1e308}`,
		`{"method":"dpvd","per_layer_clip":[1,2],"hidden":[3],"noise_multiplier":1}`,
		`{"method":"sgld","pca_dim":4,"pca_noise_multiplier":0,"noise_multiplier":1}`,
		`{"method":"dpsgd","target_epsilon":-1,"noise_multiplier":1}`,
		`{"method":"dpsgd","target_epsilon":1,"target_delta":1,"noise_multiplier":1}`,
		`{"method":"x"}`,
		`{"lot_size":-5}`,
		`{"batch_size":1e9}`,
		`{"seed":18446744073709551615,"noise_multiplier":2}`,
		`{"hidden":null,"epochs":0}`,
		`{"learning_rate":-0.1,"noise_multiplier":1}`,
		`{"sampling":"shuffle","noise_multiplier":1,"gamma":1e400}`,
	} {
		f.Add([]byte(s), int64(60), int64(4))
	}
	f.Fuzz(func(t *testing.T, b []byte, n, d int64) {
		var c Config
		if err := json.Unmarshal(b, &c); err != nil {
			return
		}
		if n < -1<<40 || n > 1<<40 || d < -1<<20 || d > 1<<20 {
			t.Skip()
		}
		dc := c.WithDefaults(int(n))
		err := dc.Validate(int(n), int(d))
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || strings.ContainsAny(err.Error(), "\n\r") || !strings.HasPrefix(err.Error(), "trainer: ") {
				t.Fatalf("Validate error %q is not a one-line FieldError", err)
			}
			return
		}
		// A valid config's derived quantities are finite and in range.
		if s := dc.TotalSteps(int(n)); s < 1 || s > (1<<20)*int(n) {
			t.Fatalf("TotalSteps = %d for a valid config", s)
		}
		if q := dc.SamplingRate(int(n)); !(q > 0 && q <= 1) {
			t.Fatalf("SamplingRate = %g for a valid config", q)
		}
		if s := dc.Sensitivity(); !(s > 0) || !finite(s) {
			t.Fatalf("Sensitivity = %g for a valid config %+v", s, dc)
		}
		if dc.Method.Private() {
			if s := dc.EffectiveNoiseMultiplier(); !(s > 0) || !finite(s) {
				t.Fatalf("EffectiveNoiseMultiplier = %g for a valid config %+v", s, dc)
			}
		}
		// Defaults are idempotent and JSON round-trips the defaulted config.
		if again := dc.WithDefaults(int(n)); !reflect.DeepEqual(again, dc) {
			t.Fatalf("WithDefaults is not idempotent:\n%+v\n%+v", dc, again)
		}
		out, err := json.Marshal(dc)
		if err != nil {
			t.Fatalf("valid config does not marshal: %v", err)
		}
		var back Config
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		if err := back.Validate(int(n), int(d)); err != nil {
			t.Fatalf("round-tripped config %s no longer validates: %v", out, err)
		}
	})
}

// TestConfigKnownBugs pins two fixed config bugs: an explicit empty hidden
// list stays empty through repeated defaulting, and Validate refuses σ or C
// whose derived noise scale overflows.
func TestConfigKnownBugs(t *testing.T) {
	t.Run("empty hidden becomes default", func(t *testing.T) {
		c := Config{Method: MethodNP, Hidden: []int{}, LotSize: 10, Epochs: 1}.WithDefaults(60)
		if again := c.WithDefaults(60); again.Hidden == nil || len(again.Hidden) != 0 {
			t.Errorf("hidden [] → %#v after a second WithDefaults, want []", again.Hidden)
		}
	})
	t.Run("noise overflow", func(t *testing.T) {
		for _, c := range []Config{
			{Method: MethodDPD, Hidden: []int{3}, Epochs: 1, NoiseMultiplier: 1e308},
			{Method: MethodDPSGD, Hidden: []int{3}, Epochs: 1, NoiseMultiplier: 1, PerLayerClip: []float64{1e200, 1}},
			{Method: MethodDPSGD, Hidden: []int{3}, Epochs: 1, NoiseMultiplier: 1e200, ClipNorm: 1e200},
		} {
			c = c.WithDefaults(60)
			if err := c.Validate(60, 4); err == nil {
				t.Errorf("σ = %g, sensitivity %g validated; the noise std overflows", c.NoiseMultiplier, c.Sensitivity())
			}
		}
	})
}
