#!/usr/bin/python3
# A copy of the team's PyTorch decoding peer, kept in bench/ so that `make bench`
# needs nothing outside the repository.
"""PyTorch peer for decoding with a KV cache: one new token per sequence per step against a preallocated cache
(what a hand-written PyTorch decoder or a static cache does), timed per step.

  OPENBLAS_CORETYPE=SkylakeX OMP_WAIT_POLICY=passive /usr/bin/python3 torch_decode.py \
      --batch 4 --context 4096 --d-model 512 --heads 8 [--kv-heads 2] [--steps 32] [--threads 2] [--dtype bf16]

Prints one line: median and min ms per step, and the bytes a step must read (caches up to the context + weights).
Grouped-query heads are grouped against their shared key/value head (no copy of the cache).
"""
import argparse, math, statistics, time
import torch

p = argparse.ArgumentParser()
p.add_argument("--batch", type=int, default=4); p.add_argument("--context", type=int, default=4096)
p.add_argument("--d-model", type=int, default=512); p.add_argument("--heads", type=int, default=8)
p.add_argument("--kv-heads", type=int, default=0); p.add_argument("--steps", type=int, default=32)
p.add_argument("--warmup", type=int, default=4); p.add_argument("--threads", type=int, default=2)
p.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
a = p.parse_args()
torch.set_num_threads(a.threads)
dt = torch.float32 if a.dtype == "f32" else torch.bfloat16
B, D, H = a.batch, a.d_model, a.heads
Hkv = a.kv_heads or H; dk = D // H; cap = a.context + a.warmup + a.steps + 1
g = torch.Generator().manual_seed(0)
W = [torch.randn(D, n, generator=g, dtype=torch.float32).to(dt) / math.sqrt(D) for n in (D, Hkv * dk, Hkv * dk, D)]
b = [torch.zeros(n, dtype=dt) for n in (D, Hkv * dk, Hkv * dk, D)]
Kc = torch.randn(B, Hkv, cap, dk, generator=g).to(dt); Vc = torch.randn(B, Hkv, cap, dk, generator=g).to(dt)

def step(x, pos):
    q = (x @ W[0] + b[0]).view(B, 1, H, dk).transpose(1, 2)                 # [B,H,1,dk]
    k = (x @ W[1] + b[1]).view(B, 1, Hkv, dk).transpose(1, 2)
    v = (x @ W[2] + b[2]).view(B, 1, Hkv, dk).transpose(1, 2)
    Kc[:, :, pos:pos + 1] = k; Vc[:, :, pos:pos + 1] = v
    K = Kc[:, :, :pos + 1]; V = Vc[:, :, :pos + 1]
    qg = q.reshape(B, Hkv, H // Hkv, dk)                                    # the heads of a group share K, V
    s = (qg @ K.transpose(-1, -2)) * (1.0 / math.sqrt(dk))                  # [B,Hkv,H/Hkv,S]
    o = (torch.softmax(s.float(), -1).to(dt) @ V).reshape(B, H, 1, dk)
    return o.transpose(1, 2).reshape(B, 1, D) @ W[3] + b[3]

times = []
with torch.inference_mode():
    pos = a.context
    for i in range(a.warmup + a.steps):
        x = torch.randn(B, 1, D, generator=g).to(dt)
        t0 = time.perf_counter(); step(x, pos); t1 = time.perf_counter()
        pos += 1
        if i >= a.warmup: times.append((t1 - t0) * 1e3)
esz = 4 if dt == torch.float32 else 2
nbytes = 2 * B * Hkv * (a.context + 1) * dk * esz + 4 * D * D * esz
print(f"torch decode ({B},{a.context},{D},{H}) Hkv={Hkv} {a.dtype}: median {statistics.median(times):.3f} ms, "
      f"min {min(times):.3f} ms per step; {nbytes / 2**20:.1f} MiB read per step; torch {torch.__version__}, {a.threads} threads")
