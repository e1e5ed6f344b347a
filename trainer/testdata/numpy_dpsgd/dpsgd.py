# Independent numpy DP-SGD (Abadi et al. 2016, Algorithm 1) on the dpcalc DIGITS
# split, written to check the trainer (docs/training.md, "Accuracy under DP").
# Export the split first: go run ./trainer/testdata/numpy_dpsgd/export_digits.go DIR
# then: python3 dpsgd.py --data DIR --seed 1 --lr 0.02  (Debian: python3-numpy)
import numpy as np, sys, argparse
p = argparse.ArgumentParser()
p.add_argument('--sigma', type=float, default=10.7361)
p.add_argument('--lr', type=float, default=0.02)
p.add_argument('--lot', type=int, default=100)
p.add_argument('--clip', type=float, default=2.0)
p.add_argument('--hidden', type=int, default=500)
p.add_argument('--steps', type=int, default=1500)
p.add_argument('--seed', type=int, default=1)
p.add_argument('--init', default='he')      # he | glorot | torch
p.add_argument('--norm', default='L')       # L | actual
p.add_argument('--sampling', default='poisson')  # poisson | shuffle
p.add_argument('--scale', default='16')     # 16 | std
p.add_argument('--data', default='/tmp')
a = p.parse_args()
tr = np.loadtxt(a.data + '/dtrain.csv', delimiter=','); te = np.loadtxt(a.data + '/dtest.csv', delimiter=',')
X, Y = tr[:, :64], tr[:, 64].astype(int); Xt, Yt = te[:, :64], te[:, 64].astype(int)
if a.scale == 'std':
    mu, sd = X.mean(0), X.std(0) + 1e-8
    X, Xt = (X - mu) / sd, (Xt - mu) / sd
N, D, K, H = len(X), 64, 10, a.hidden
rng = np.random.default_rng(a.seed)
def init(i, o, last):
    if a.init == 'he':
        s = np.sqrt(2 / i) if not last else np.sqrt(2 / (i + o))
        return rng.normal(0, s, (i, o))
    if a.init == 'glorot':
        return rng.normal(0, np.sqrt(2 / (i + o)), (i, o))
    b = 1 / np.sqrt(i)
    return rng.uniform(-b, b, (i, o))
W1, b1, W2, b2 = init(D, H, False), np.zeros(H), init(H, K, True), np.zeros(K)
if a.init == 'torch':
    b1 = rng.uniform(-1/np.sqrt(D), 1/np.sqrt(D), H); b2 = rng.uniform(-1/np.sqrt(H), 1/np.sqrt(H), K)
q = a.lot / N
perm, pos = None, 0
for t in range(a.steps):
    if a.sampling == 'poisson':
        idx = np.nonzero(rng.random(N) < q)[0]
    else:
        if perm is None or pos >= N:
            perm, pos = rng.permutation(N), 0
        idx = perm[pos:pos + a.lot]; pos += a.lot
    x, y = X[idx], Y[idx]
    h = np.maximum(x @ W1 + b1, 0); z = h @ W2 + b2
    z -= z.max(1, keepdims=True); pr = np.exp(z); pr /= pr.sum(1, keepdims=True)
    g2 = pr.copy(); g2[np.arange(len(idx)), y] -= 1          # dL/dz per example
    g1 = (g2 @ W2.T) * (h > 0)                                # dL/dpre1
    # per-example squared norms over all parameters
    n2 = (np.sum(x * x, 1) + 1) * np.sum(g1 * g1, 1) + (np.sum(h * h, 1) + 1) * np.sum(g2 * g2, 1)
    f = np.minimum(1, a.clip / (np.sqrt(n2) + 1e-12))
    g1 *= f[:, None]; g2 *= f[:, None]
    GW1, Gb1, GW2, Gb2 = x.T @ g1, g1.sum(0), h.T @ g2, g2.sum(0)
    s = a.sigma * a.clip
    GW1 += rng.normal(0, s, GW1.shape); Gb1 += rng.normal(0, s, Gb1.shape)
    GW2 += rng.normal(0, s, GW2.shape); Gb2 += rng.normal(0, s, Gb2.shape)
    den = a.lot if a.norm == 'L' else max(1, len(idx))
    W1 -= a.lr * GW1 / den; b1 -= a.lr * Gb1 / den; W2 -= a.lr * GW2 / den; b2 -= a.lr * Gb2 / den
acc = np.mean(np.argmax(np.maximum(Xt @ W1 + b1, 0) @ W2 + b2, 1) == Yt)
print(f"{acc:.4f}", ' '.join(f'{k}={v}' for k, v in vars(a).items()))
