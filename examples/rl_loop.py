#!/usr/bin/env python3
"""An RL-style loop over `ptxforge serve`: the shape a trainer's rollout step takes.

Each step samples a batch of candidates from a policy, gets their verdicts from the service in
one bounded-concurrency call, turns each verdict into a reward and updates the policy. The
"policy" here is a softmax over a few hand-written variants of vector_add (right, wrong,
broken, a fast-looking one that skips the bounds check), updated with a plain REINFORCE step, so
the loop runs without a model: watch the probability move toward the correct variant.

Samples whose reward is None (no verdict: e.g. the CPU engine does not run an instruction)
are dropped from the update, never counted as 0.

    ptxforge serve --cpu-workers 2 &      # prints its address on stderr
    python3 examples/rl_loop.py http://127.0.0.1:8765 --steps 3

Standard library only; run from the repository root (or with python/ on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from ptxforge_client import Client, explain  # noqa: E402

TASK = "level1/vector_add"


def variants() -> dict[str, str]:
    """Text variants a model might write, from the shipped solution."""
    good = (ROOT / "tasks/level1/vector_add/solution.ptx").read_text()
    return {
        "correct": good,
        "wrong-op": good.replace("add.f32 %z, %x, %y;", "sub.f32 %z, %x, %y;"),
        "no-bounds-check": good.replace("    @%p bra DONE;\n", ""),
        "typo": good.replace("ld.global.nc.f32 %x, [%qa];", "ld.global.nc.f32 %x, [%qq];"),
        "comment-noise": good.replace("add.f32 %z, %x, %y;", "add.f32 %z, %x, %y; // fast path"),
    }


def softmax(logits: dict[str, float]) -> dict[str, float]:
    m = max(logits.values())
    e = {k: math.exp(v - m) for k, v in logits.items()}
    z = sum(e.values())
    return {k: v / z for k, v in e.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url", nargs="+", help="server URL(s), e.g. http://127.0.0.1:8765")
    ap.add_argument("--token", help="bearer token, if the server has a token file")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--device", default="auto", choices=["auto", "gpu", "cpu"])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    texts = variants()
    logits = {k: 0.0 for k in texts}
    client = Client(args.url, token=args.token)
    print(f"server: {client.health().get('version', '?')} at {', '.join(client.endpoints)}")
    for step in range(1, args.steps + 1):
        probs = softmax(logits)
        names = rng.choices(list(texts), weights=[probs[k] for k in texts], k=args.batch)
        items = [{"task": TASK, "candidate": texts[n], "device": args.device, "seeds": 1} for n in names]
        views = client.run_many(items, concurrency=args.concurrency, return_exceptions=True)
        rows, scored = [], []
        for n, v in zip(names, views):
            if isinstance(v, Exception):
                rows.append((n, None, f"error: {v}"))
                continue
            r, why = explain(v["record"])
            rows.append((n, r, why))
            if r is not None:
                scored.append((n, r))
        print(f"\nstep {step}")
        print(f"  {'variant':<16} {'reward':>7}  why")
        for n, r, why in rows:
            print(f"  {n:<16} {'None' if r is None else f'{r:+.2f}':>7}  {why}")
        if not scored:
            print("  no verdicts this step: nothing to learn from")
            continue
        # REINFORCE with a mean baseline: d log p(n) / d logit(k) = [n == k] - p(k).
        baseline = sum(r for _, r in scored) / len(scored)
        for n, r in scored:
            for k in logits:
                logits[k] += args.lr * (r - baseline) * ((1.0 if k == n else 0.0) - probs[k]) / len(scored)
        dropped = len(rows) - len(scored)
        print(f"  mean reward {baseline:+.3f}, dropped {dropped} without a verdict; "
              f"p(correct) {softmax(logits)['correct']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
