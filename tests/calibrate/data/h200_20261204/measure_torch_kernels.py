# Kernel-level measurements on the lent H200 for traincast's compute model (issue 17): fused
# attention (PyTorch SDPA, FlashAttention-2 and cuDNN backends) forward and backward, and
# memory-bound PyTorch kernels. CUDA events; median of 5 samples, each a loop sized to ~40 ms.
import csv, os, sys, time
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

out_dir = sys.argv[1]
dev = "cuda"
torch.manual_seed(0)
budget_s = float(sys.argv[2]) if len(sys.argv) > 2 else 150
t_start = time.time()

def timed(fn):
    fn(); torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); torch.cuda.synchronize()
    t1 = max(s.elapsed_time(e) / 1e3, 1e-6)
    n = max(2, min(200, int(0.04 / t1)))
    ts = []
    for _ in range(5):
        s.record()
        for _ in range(n):
            fn()
        e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3 / n)
    ts.sort()
    return ts[2], n

props = torch.cuda.get_device_properties(0)
meta = dict(gpu=props.name, sms=props.multi_processor_count, torch=torch.__version__,
            cuda=torch.version.cuda, cudnn=str(torch.backends.cudnn.version()))
print(meta, flush=True)

att_rows = []
backends = [("flash2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
tokens = 16384
for hd in (128, 64):
    for seq in (1024, 2048, 4096, 8192, 16384, 512):
        for causal in (True, False):
            for name, be in backends:
                if time.time() - t_start > budget_s * 0.7:
                    break
                b = max(1, tokens // seq); h = 2048 // hd
                q = torch.randn(b, h, seq, hd, device=dev, dtype=torch.bfloat16, requires_grad=True)
                k = torch.randn_like(q, requires_grad=True); v = torch.randn_like(q, requires_grad=True)
                try:
                    with sdpa_kernel([be]):
                        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        tf, nf = timed(fwd)
                        o = fwd(); g = torch.randn_like(o)
                        def fb():
                            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            torch.autograd.grad(o, (q, k, v), g)
                        tfb, nb = timed(fb)
                except Exception as ex:
                    print("skip", name, hd, seq, causal, type(ex).__name__, str(ex)[:120], flush=True)
                    continue
                fl = 4.0 * b * h * seq * seq * hd * (0.5 if causal else 1.0)
                row = dict(backend=name, batch=b, heads=h, seq_len=seq, head_dim=hd, causal=int(causal),
                           fwd_s=tf, fwd_bwd_s=tfb, bwd_s=tfb - tf, fwd_flops=fl, bwd_flops=2.5 * fl,
                           fwd_tflops=fl / tf / 1e12, bwd_tflops=2.5 * fl / (tfb - tf) / 1e12, loops=nf)
                att_rows.append(row)
                print(f"{name:6s} hd{hd} s{seq:6d} causal{int(causal)} fwd {row['fwd_tflops']:.0f} bwd {row['bwd_tflops']:.0f} TFLOP/s", flush=True)
                del q, k, v
with open(os.path.join(out_dir, "h200_sdpa_attention.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(att_rows[0].keys())); w.writeheader(); w.writerows(att_rows)

mem_rows = []
for n_elem in (1 << 22, 1 << 24, 1 << 26, 1 << 28):
    if time.time() - t_start > budget_s * 0.95:
        break
    x = torch.randn(n_elem // 4096, 4096, device=dev, dtype=torch.bfloat16)
    y = torch.randn_like(x)
    wln = torch.ones(4096, device=dev, dtype=torch.bfloat16); bln = torch.zeros_like(wln)
    p = torch.randn(n_elem, device=dev, dtype=torch.float32); gr = torch.randn_like(p)
    m1 = torch.zeros_like(p); m2 = torch.zeros_like(p); st = torch.tensor(1.0, device=dev)
    e2 = 2 * n_elem  # bytes of one bf16 tensor
    cases = [
        ("add_bf16", lambda: x + y, 3 * e2),
        ("gelu_bf16", lambda: F.gelu(x), 2 * e2),
        ("layer_norm_bf16", lambda: F.layer_norm(x, (4096,), wln, bln), 2 * e2),
        ("softmax_bf16", lambda: torch.softmax(x, dim=-1), 2 * e2),
        ("copy_bf16", lambda: x.clone(), 2 * e2),
        ("adamw_fused_fp32", lambda: torch._fused_adamw_([p], [gr], [m1], [m2], [], [st], lr=1e-4, beta1=0.9,
                                                         beta2=0.95, weight_decay=0.1, eps=1e-8, amsgrad=False,
                                                         maximize=False), 7 * 4 * n_elem),
    ]
    for name, fn, nbytes in cases:
        try:
            t, n = timed(fn)
        except Exception as ex:
            print("skip", name, type(ex).__name__, str(ex)[:120], flush=True); continue
        mem_rows.append(dict(kernel=name, elements=n_elem, bytes=nbytes, time_s=t, gb_per_s=nbytes / t / 1e9, loops=n))
        print(f"{name:18s} {n_elem:>10d} {nbytes/t/1e9:8.0f} GB/s {t*1e6:9.1f} us", flush=True)
with open(os.path.join(out_dir, "h200_torch_memory_kernels.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(mem_rows[0].keys())); w.writeheader(); w.writerows(mem_rows)
with open(os.path.join(out_dir, "h200_kernels_meta.txt"), "w") as f:
    f.write(repr(meta) + "\n")
print("done in", time.time() - t_start, "s")
