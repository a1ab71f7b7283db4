#!/usr/bin/env python3
"""Times PyTorch's fused attention on the shown sizes of tasks/level3/flash_attn_fwd.

The harness has no library baseline for attention (cuDNN's fused attention needs its graph
API), so this tool gives the comparison a person wants: the same shapes through
torch.nn.functional.scaled_dot_product_attention, once per backend the machine offers
(FlashAttention-2 as built into PyTorch, cuDNN, memory-efficient), bf16, head dim 128.

Method: inputs uniform as the task draws them, 10 warm-up calls, then N calls each timed
alone with CUDA events, the L2 flushed (a 512 MiB write) before each; the median is printed
with the achieved TFLOP/s (4 b h s^2 d flops, halved under the causal mask).

Usage: perf/attention_torch.py [TRIALS]   (on a GPU machine with PyTorch)
"""
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [("noncausal", 2, 16, 4096, False), ("causal", 2, 16, 4096, True)]
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]


def time_one(fn, trials, flush):
    for _ in range(10):
        fn()
    times = []
    for _ in range(trials):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, median of {trials} trials")
    flush = torch.empty(512 << 20, dtype=torch.uint8, device=dev)
    for name, b, h, s, causal in SHAPES:
        q = (torch.rand(b, h, s, 128, device=dev) * 6 - 3).to(torch.bfloat16)
        k = (torch.rand(b, h, s, 128, device=dev) * 6 - 3).to(torch.bfloat16)
        v = (torch.rand(b, h, s, 128, device=dev) * 2 - 1).to(torch.bfloat16)
        flops = 4 * b * h * s * s * 128 / (2 if causal else 1)
        for backend, which in BACKENDS:
            try:
                with sdpa_kernel(which):
                    ms = time_one(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), trials, flush)
            except RuntimeError as e:
                print(f"{name:10} {backend:10} unavailable: {str(e).splitlines()[0][:100]}")
                continue
            print(f"{name:10} {backend:10} {ms:8.4f} ms  {flops / ms / 1e9:7.1f} TFLOP/s")


if __name__ == "__main__":
    main()
