#!/usr/bin/env python3
"""The CPU engine's verdicts against a GPU's, on the same kernels and the same seed.

Every tasks/level1 solution and every adversarial kernel whose defect is one of correctness
(tests/adversarial: those the CPU engine applies to, see adversarial.py's cpu mode) run twice
through `ptxforge run --json --no-time --seed S`: once with --device gpu, once with --device cpu.
Prints a table of the two verdicts and failure kinds, one row a kernel:

  agree      both ran and came to the same verdict (pass, or a failure at the same stage)
  DISAGREE   both ran and did not: a pass against a failure, or failures at other stages
  n/a        a timing-only or proof cheat, or one whose `cpu_na` says why (not run at all)
  engine     a defect only the engine's checks see (`cpu_only`): the GPU's verdict is shown
  not run    one side gave no verdict (no GPU; an instruction the engine does not execute)

Failure kinds differing under the same verdict (a GPU `fault` where the engine names the
out-of-bounds access) are shown, not counted: the two engines word the same defect apart.
The GPU verifies on every size set, the engine on the task's CPU sets (docs/emu.md, section 1).

  engine_compare.py <ptxforge> [--seed S] [--cpu-only] [name...]

Exit 1 on any DISAGREE row, 77 when the GPU half verified nothing (no GPU), else 0. --cpu-only
runs the engine's half alone (a dry run on a machine without a GPU): nothing is compared.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "adversarial"))
import adversarial as adv  # noqa: E402  (the kernels, their expectations and `ptxforge run`)


def verdict(record, device):
    """(verdict, kind) of one run record: ("pass", ""), ("fail", "<stage>: <kind>") or ("not run", why)."""
    if record is None:
        return "not run", "no run record"
    if device == "gpu" and adv.not_on_gpu(record):
        return "not run", "no GPU"
    if device == "cpu":
        why = adv.unsupported_on_engine(record)
        if why:
            return "not run", "unsupported on the engine"
    failed = adv.failing_stage(record)
    if failed is None:
        return ("pass", "") if record.get("passed") else ("not run", record.get("verdict", ""))
    stage = failed[0]
    failure = record.get("failure") or {}
    kind = failure.get("kind") or ("wrong output" if stage == "verify" else "")
    return "fail", f"{stage}: {kind}" if kind else stage


def compare(gpu, cpu, cpu_only):
    """The row's agreement for two (verdict, kind) pairs."""
    if cpu_only:
        return "engine"
    if gpu[0] == "not run" or cpu[0] == "not run":
        return "not run"
    if gpu[0] != cpu[0]:
        return "DISAGREE"
    # The engine's checks (bounds, init bits, races) run in verify: a GPU sanitizer's finding is verify's there.
    stage = {"sanitize": "verify"}
    if gpu[0] == "fail" and stage.get(gpu[1].split(":")[0], gpu[1].split(":")[0]) != cpu[1].split(":")[0]:
        return "DISAGREE"
    return "agree"


def run_half(ptxforge, device, seed, groups):
    """{candidate path: record} for every group of (task, options) -> paths, on one device."""
    out = {}
    for (task, options), paths in groups.items():
        # The engine has no sanitizer stage (its checks run in verify); both halves never time.
        options = [o for o in options if o != "--sanitize"] if device == "cpu" else list(options)
        args = ["--device", device, "--no-time", "--seed", str(seed)] + options + [task] + paths
        rc, records, err = adv.run_ptxforge(ptxforge, args, 3600)
        if records is None or rc not in (0, 1):
            print(f"warning: `ptxforge run {' '.join(args[:6])} ...` exited {rc}: {err.strip()[-400:]}", file=sys.stderr)
        for r in records or []:
            out[r.get("candidate")] = r
        print(f"{device}: {task} {' '.join(options)}: {len(paths)} candidates", file=sys.stderr, flush=True)
    return out


def main(argv):
    seed, cpu_only_run, names, args = 1, False, [], list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    ptxforge = args.pop(0)
    while args:
        a = args.pop(0)
        if a == "--seed":
            seed = int(args.pop(0))
        elif a == "--cpu-only":
            cpu_only_run = True
        else:
            names.append(a)
    rows, groups, members = [], {}, []
    for k in adv.load_kernels(names):
        want = adv.cpu_expectation(k)
        if want[0] == "n/a":
            rows.append((k.name, k.task, ("n/a", ""), ("n/a", ""), "n/a", want[1]))
            continue
        options = tuple(o for o in k.options if o != "--no-time")
        groups.setdefault((k.task, options), []).append(k.path)
        members.append((k.name, k.task, k.path, k.cpu_only))
    if not names:
        for task in adv.level1_tasks():
            path = adv.solution_path(task)
            groups.setdefault((task, ()), []).append(path)
            members.append((f"solution {task}", task, path, False))
    cpu = run_half(ptxforge, "cpu", seed, groups)
    gpu = {} if cpu_only_run else run_half(ptxforge, "gpu", seed, groups)
    for name, task, path, only in members:
        c = verdict(cpu.get(path), "cpu")
        g = ("not run", "--cpu-only") if cpu_only_run else verdict(gpu.get(path), "gpu")
        rows.append((name, task, g, c, "not run" if cpu_only_run else compare(g, c, only), ""))

    width = max(len(r[0]) for r in rows)
    print(f"seed {seed}; GPU: --device gpu, every size set; CPU: --device cpu, the task's CPU size sets")
    print(f"{'name':<{width}} | {'gpu':<8} | {'gpu kind':<26} | {'cpu':<8} | {'cpu kind':<26} | agreement")
    print(f"{'-' * width}-+-{'-' * 8}-+-{'-' * 26}-+-{'-' * 8}-+-{'-' * 26}-+-{'-' * 9}")
    for name, _, g, c, agreement, note in rows:
        line = f"{name:<{width}} | {g[0]:<8} | {g[1][:26]:<26} | {c[0]:<8} | {c[1][:26]:<26} | {agreement}"
        if note:
            line += f" ({note[:100]})"
        elif agreement == "agree" and g[1] != c[1]:
            line += " (kinds differ)"
        print(line)
    disagree = sum(1 for r in rows if r[4] == "DISAGREE")
    compared = sum(1 for r in rows if r[4] in ("agree", "DISAGREE"))
    na = sum(1 for r in rows if r[4] == "n/a")
    print(f"\n{compared} compared, {disagree} disagreements, {na} not applicable, "
          f"{sum(1 for r in rows if r[4] == 'engine')} engine-only defects, {sum(1 for r in rows if r[4] == 'not run')} not run")
    if cpu_only_run:
        print("--cpu-only: the engine's half alone; nothing was compared")
        return 0
    if not any(r[2][0] in ("pass", "fail") for r in rows):
        print("no GPU verdict at all: nothing compared (no GPU?)")
        return 77
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
