#!/usr/bin/env python3
"""The adversarial set: cheating and broken kernels that the harness must catch.

Each folder <name>/ holds kernel.ptx or kernel.cu (a candidate with its `// @launch` lines) and expect.toml:
the task, the stage that must fail (a name, or a list of names any of which will do), a regex
the failing stage's summary must match, extra `ptxforge run` options, a class and a one-line
description. run.sh calls this file; it has three modes:

  gpu <ptxforge> [name...]    run every kernel (or the named ones) and every tasks/level1
                              solution; kernels with the same task and options share one
                              `ptxforge run --json` process (one harness, one worker that must
                              survive faults and hangs), a task's solution runs last in the
                              group without options. Exit 0 when every kernel failed as
                              expected and every solution passed, 1 otherwise, 77 without a GPU.
  static <ptxforge> [name...] the part a machine without a GPU can check: ptxas assembles every
                              kernel not expected to fail at check or assemble, and `ptxforge
                              run` (which checks and assembles, then stops for want of a GPU)
                              gives each kernel the verdict its expectation implies there.
  cpu <ptxforge> [name...]    the same candidates through the CPU engine (`run --device cpu
                              --no-time`, no GPU needed): a kernel the GPU fails at verify or
                              sanitize must fail verify here (its `cpu_reason`, else its
                              `reason`), one that fails at check or assemble fails there too,
                              every level-1 solution passes; timing-only cheats (stage time or
                              honest), proofs (prove) and kernels whose `cpu_na` says why are
                              listed as not applicable, and so is a kernel the engine refuses as
                              unsupported (never a pass).
  judge <records.json> <candidate=name>...   judge saved `run --json` output (tests the parser).

expect.toml's optional keys for the CPU engine: `cpu_reason` (a regex for the verify summary when
the engine words the same failure differently), `cpu_na` (why the kernel does not apply there) and
`cpu_only = true` (a defect only the engine's checks can see, such as a race that gives the right
answer: on a GPU its verdict is shown, not asserted).

ADVERSARIAL_RECORDS=<file> appends every `ptxforge run --json` record the gpu and cpu modes get
to <file>, one JSON line each (the notes and stage details the table leaves out).
"""
import json
import os
import re
import subprocess
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STAGES = ("check", "assemble", "verify", "sanitize", "time", "prove")
# A cheat the harness neutralises instead of failing: the per-trial preamble (outputs
# poisoned, scratch zeroed, .global variables restored, fresh inputs) leaves it nothing to
# skip, so it must pass and be timed honestly: on no size set faster than HONEST_LIMIT x the
# nvcc reference (its skipping would make it many times faster).
HONEST = "honest"
HONEST_LIMIT = 2.0
KEYS = {"task", "class", "stage", "reason", "options", "description"}
OPTIONAL_KEYS = {"cpu_reason", "cpu_na", "cpu_only"}


class Kernel:
    def __init__(self, name):
        self.name = name
        # kernel.ptx, or kernel.cu for a CUDA candidate (NVRTC compiles it in the check stage)
        cu = os.path.join(HERE, name, "kernel.cu")
        self.path = cu if os.path.isfile(cu) else os.path.join(HERE, name, "kernel.ptx")
        with open(os.path.join(HERE, name, "expect.toml"), "rb") as f:
            e = tomllib.load(f)
        unknown = set(e) - KEYS - OPTIONAL_KEYS
        missing = KEYS - set(e)
        if unknown or missing:
            raise SystemExit(f"{name}/expect.toml: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")
        # A suite task by name ("level1/vector_add"), or a test task by its folder in the tree.
        self.task = os.path.join(ROOT, e["task"]) if e["task"].startswith("tests/") else e["task"]
        self.stages = [e["stage"]] if isinstance(e["stage"], str) else list(e["stage"])
        for s in self.stages:
            if s not in STAGES + (HONEST,):
                raise SystemExit(f"{name}/expect.toml: stage '{s}' is not one of {', '.join(STAGES + (HONEST,))}")
        self.reason = re.compile(e["reason"])
        self.options = list(e["options"])
        self.cls = e["class"]
        self.description = e["description"]
        self.cpu_reason = re.compile(e["cpu_reason"]) if "cpu_reason" in e else self.reason
        self.cpu_na = e.get("cpu_na", "")
        self.cpu_only = bool(e.get("cpu_only", False))
        if not os.path.isfile(self.path):
            raise SystemExit(f"{name}: kernel.ptx (or kernel.cu) is missing")


def load_kernels(names):
    every = sorted(d for d in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, d, "expect.toml")))
    for n in names:
        if n not in every:
            raise SystemExit(f"no adversarial kernel named '{n}' (have: {', '.join(every)})")
    return [Kernel(n) for n in (names or every)]


def failing_stage(record):
    """(stage name, summary) of the first FAILED stage, or None."""
    for s in record.get("stages", []):
        if s.get("status") == "FAILED":
            return s.get("name", "?"), s.get("summary", "")
    return None


def not_on_gpu(record):
    for s in record.get("stages", []):
        if s.get("name") == "verify" and s.get("status") == "skipped" and s.get("summary", "").startswith("NOT verified"):
            return True
    return False


def judge_kernel(kernel, record):
    """(stage, reason, ok, note) for one adversarial kernel's run record (None: no record)."""
    if record is None:
        return "-", "no run record (the run printed no JSON for it)", False, "missing"
    failed = failing_stage(record)
    if kernel.cpu_only:
        # What the GPU makes of a defect only the CPU engine can see: shown, not judged.
        return "gpu", "cpu only; on the GPU: " + (f"{failed[0]}: {failed[1]}" if failed else record.get("verdict", "")), True, ""
    if HONEST in kernel.stages:
        return judge_honest(record, failed)
    if failed is None:
        if not_on_gpu(record):
            return "-", record.get("verdict", ""), False, "not verified on a GPU"
        return "passed", record.get("verdict", ""), False, "PASSED: the harness did not catch it"
    stage, summary = failed
    if stage not in kernel.stages:
        return stage, summary, False, f"want stage {'/'.join(kernel.stages)}"
    if not kernel.reason.search(summary):
        return stage, summary, False, f"want /{kernel.reason.pattern}/"
    return stage, summary, True, ""


def judge_honest(record, failed):
    """A neutralised cheat: it passes, and no size set is timed faster than HONEST_LIMIT x nvcc."""
    if failed is not None:
        return failed[0], failed[1], False, "want: passed, timed honestly"
    if not record.get("passed"):
        return "-", record.get("verdict", ""), False, "want: passed, timed honestly"
    sizes = (record.get("time") or {}).get("sizes", [])
    if not sizes:
        return "passed", "no timings", False, "want timings (run without --no-time)"
    worst = []
    for s in sizes:
        cand = (s.get("candidate") or {}).get("median_ms", 0)
        ref = (s.get("reference") or {}).get("median_ms", 0)
        if cand <= 0 or ref <= 0:
            return "passed", f"size set '{s.get('size_set')}' has no median", False, "want timings"
        worst.append((ref / cand, s.get("size_set")))
    speedup, where = max(worst)
    summary = f"passed, timed honestly: at most {speedup:.2f}x nvcc ({where})"
    if speedup > HONEST_LIMIT:
        return "passed", summary, False, f"faster than {HONEST_LIMIT}x nvcc: it skipped work"
    return HONEST, summary, True, ""


def judge_solution(record):
    if record is None:
        return "-", "no run record", False, "missing"
    failed = failing_stage(record)
    if failed:
        return failed[0], failed[1], False, "a known-good solution must pass"
    if not record.get("passed"):
        return "-", record.get("verdict", ""), False, "a known-good solution must pass"
    return "passed", record.get("verdict", ""), True, ""


def print_table(rows):
    """rows: (name, stage, reason, ok, note). Returns the number of rows not ok."""
    width = max([len(r[0]) for r in rows] + [4])
    print(f"{'name':<{width}} | {'stage':<8} | {'ok':<4} | reason")
    print(f"{'-' * width}-+-{'-' * 8}-+-{'-' * 4}-+-{'-' * 40}")
    bad = 0
    for name, stage, reason, ok, note in rows:
        text = reason.replace("\n", " ")
        if len(text) > 160:
            text = text[:157] + "..."
        print(f"{name:<{width}} | {stage:<8} | {'ok' if ok else 'FAIL':<4} | {text}")
        if not ok:
            bad += 1
            print(f"{'':<{width}} |          |      |   ^ {note}")
    return bad


def run_ptxforge(ptxforge, args, timeout, env=None):
    """Runs `ptxforge run --json ...`; returns (exit code, list of records or None, stderr tail)."""
    try:
        p = subprocess.run([ptxforge, "run", "--json"] + args, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return -1, None, f"ptxforge run did not finish in {timeout} s"
    try:
        records = json.loads(p.stdout)
    except json.JSONDecodeError:
        return p.returncode, None, (p.stderr or p.stdout)[-2000:]
    keep = os.environ.get("ADVERSARIAL_RECORDS")
    if keep:  # every record, one JSON line each: the notes and stage details the table leaves out
        with open(keep, "a") as f:
            for r in records if isinstance(records, list) else [records]:
                f.write(json.dumps(r) + "\n")
    return p.returncode, records, p.stderr[-2000:]


def solution_path(task):
    return os.path.join(ROOT, "tasks", task, "solution.ptx")


def level1_tasks():
    base = os.path.join(ROOT, "tasks", "level1")
    return sorted("level1/" + d for d in os.listdir(base) if os.path.isfile(os.path.join(base, d, "solution.ptx")))


def mode_gpu(ptxforge, names):
    kernels = load_kernels(names)
    # --device gpu throughout: without a GPU this mode skips; it never falls back to the CPU engine.
    rc, records, err = run_ptxforge(ptxforge, ["--device", "gpu", "--no-time", "level1/vector_add",
                                               solution_path("level1/vector_add")], 600)
    if records and not_on_gpu(records[0]):
        print("no GPU: skipping (the vector_add solution was NOT verified on a GPU)")
        return 77
    if not records:
        print(f"ptxforge run failed (exit {rc}): {err}")
        return 1
    # Groups: (task, options) -> candidates, in the order of the folders; solutions join the
    # group of their task without options (so they also prove the worker recovers).
    groups = {}
    for k in kernels:
        groups.setdefault((k.task, tuple(k.options)), []).append(("kernel", k))
    if not names:
        for task in level1_tasks():
            groups.setdefault((task, ()), []).append(("solution", task))
    rows = []
    for (task, options), members in groups.items():
        paths = [m.path if kind == "kernel" else solution_path(m) for kind, m in members]
        started = time.monotonic()
        rc, records, err = run_ptxforge(ptxforge, ["--device", "gpu"] + list(options) + [task] + paths, 3600)
        # Progress on stderr as each group ends, with each candidate's verdict, so a run cut
        # short still says what it saw (the table comes only at the end).
        print(f"{task} {' '.join(options)}: {len(members)} candidates in {time.monotonic() - started:.0f} s",
              file=sys.stderr, flush=True)
        first_row = len(rows)
        by_path = {r.get("candidate"): r for r in records or []}
        if records is None or rc not in (0, 1):
            print(f"warning: `ptxforge run {' '.join(options)} {task} ...` exited {rc}: {err.strip()[-400:]}")
        for (kind, m), path in zip(members, paths):
            rec = by_path.get(path)
            if kind == "kernel":
                stage, reason, ok, note = judge_kernel(m, rec)
                rows.append((m.name, stage, reason, ok, note))
            else:
                stage, reason, ok, note = judge_solution(rec)
                rows.append((f"solution {m}", stage, reason, ok, note))
        for name, stage, reason, ok, _ in rows[first_row:]:
            print(f"  {name}: {stage}, {'as expected' if ok else 'NOT AS EXPECTED'}: {reason[:160]}",
                  file=sys.stderr, flush=True)
    bad = print_table(rows)
    print(f"\n{len(rows) - bad} of {len(rows)} as expected")
    return 1 if bad else 0


def assembles(ptx_path):
    cuda = os.environ.get("PTXFORGE_CUDA_HOME") or os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    ptxas = os.path.join(cuda, "bin", "ptxas")
    if not os.path.exists(ptxas):
        return None, "no ptxas"
    p = subprocess.run([ptxas, "-arch=sm_90a", ptx_path, "-o", os.devnull], capture_output=True, text=True)
    return p.returncode == 0, p.stderr.strip()


def mode_static(ptxforge, names):
    kernels = load_kernels(names)
    if assembles(kernels[0].path)[0] is None:
        print("no ptxas: skipping")
        return 77
    no_gpu = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    with open(os.path.join(HERE, "README.md")) as f:
        readme = f.read()
    section = readme[readme.find("## The kernels"):]
    rows = []
    for k in kernels:
        if f"| `{k.name}` |" not in section:
            rows.append((k.name, "README", "not listed in tests/adversarial/README.md's table", False, "list it there"))
            continue
        early = [s for s in k.stages if s in ("check", "assemble")]
        ok_asm, msg = assembles(k.path)
        if not early and not ok_asm:
            rows.append((k.name, "ptxas", msg, False, "must assemble with ptxas -arch=sm_90a"))
            continue
        # Without a GPU, `run` checks and assembles, then stops at verify ("NOT verified"); a GPU
        # that is there is hidden, so this stays a static test everywhere.
        # --device gpu: the GPU path with no GPU (the CPU engine's verdicts are the cpu mode's).
        rc, records, err = run_ptxforge(ptxforge, ["--device", "gpu", "--arch", "sm_90a", "--no-time", k.task, k.path], 600,
                                        env=no_gpu)
        rec = records[0] if records else None
        if rec is None:
            rows.append((k.name, "-", err, False, f"ptxforge run exited {rc} without JSON"))
            continue
        failed = failing_stage(rec)
        if failed and failed[0] in k.stages:
            stage, reason, ok, note = judge_kernel(k, rec)
            rows.append((k.name, stage, reason, ok, note))
        elif failed:
            rows.append((k.name, failed[0], failed[1], False, "must reach the GPU stages"))
        elif not early or set(early) != set(k.stages):
            ok = not_on_gpu(rec)
            rows.append((k.name, "gpu", "checks and assembles; the GPU stages decide" if ok else rec.get("verdict", ""), ok,
                         "" if ok else "expected 'NOT verified on a GPU'"))
        else:
            rows.append((k.name, "-", rec.get("verdict", ""), False, f"want a failure at {'/'.join(k.stages)}"))
    bad = print_table(rows)
    print(f"\n{len(rows) - bad} of {len(rows)} as expected")
    return 1 if bad else 0


def cpu_expectation(k):
    """("n/a", why) or (the stages any of which the engine must fail, regex) for one kernel."""
    if k.cpu_na:
        return "n/a", k.cpu_na
    # The engine's checks (bounds, init bits, races) run in verify: a sanitizer's finding is
    # verify's there. It neither times nor proves.
    stages = {"verify" if s == "sanitize" else s for s in k.stages if s in ("check", "assemble", "verify", "sanitize")}
    if not stages:
        return "n/a", "a timing or proof check: the CPU engine neither times nor proves"
    return stages, (k.cpu_reason if "verify" in stages else k.reason)


def unsupported_on_engine(record):
    for s in record.get("stages", []):
        if s.get("name") == "verify" and s.get("status") == "skipped" and "not supported by the CPU engine" in s.get("summary", ""):
            return s.get("summary", "")
    return None


def mode_cpu(ptxforge, names):
    kernels = load_kernels(names)
    groups, rows = {}, []
    for k in kernels:
        want = cpu_expectation(k)
        if want[0] == "n/a":
            rows.append((k.name, "n/a", want[1], True, ""))
            continue
        # The engine has no sanitizer stage (its checks run in verify) and never times.
        options = [o for o in k.options if o not in ("--sanitize", "--no-time")]
        groups.setdefault((k.task, tuple(options)), []).append(("kernel", k, want))
    if not names:
        for task in level1_tasks():
            groups.setdefault((task, ()), []).append(("solution", task, None))
    na_unsupported = 0
    for (task, options), members in groups.items():
        paths = [m.path if kind == "kernel" else solution_path(m) for kind, m, _ in members]
        started = time.monotonic()
        rc, records, err = run_ptxforge(ptxforge, ["--device", "cpu", "--no-time"] + list(options) + [task] + paths, 1800)
        print(f"{task} {' '.join(options)}: {len(members)} candidates in {time.monotonic() - started:.0f} s",
              file=sys.stderr, flush=True)
        by_path = {r.get("candidate"): r for r in records or []}
        if records is None or rc not in (0, 1):
            print(f"warning: `ptxforge run --device cpu {' '.join(options)} {task} ...` exited {rc}: {err.strip()[-400:]}")
        for (kind, m, want), path in zip(members, paths):
            rec = by_path.get(path)
            if kind == "solution":
                stage, reason, ok, note = judge_solution(rec)
                if ok and rec.get("verified_by") != "cpu_engine":
                    ok, note = False, f"verified_by is '{rec.get('verified_by')}', want cpu_engine"
                rows.append((f"solution {m}", stage, reason, ok, note))
                continue
            if rec is None:
                rows.append((m.name, "-", "no run record", False, "missing"))
                continue
            unsupported = unsupported_on_engine(rec)
            if unsupported:
                na_unsupported += 1
                rows.append((m.name, "n/a", unsupported, True, ""))
                continue
            failed = failing_stage(rec)
            if failed is None:
                rows.append((m.name, "passed", rec.get("verdict", ""), False, "PASSED on the CPU engine"))
            elif failed[0] not in want[0]:
                rows.append((m.name, failed[0], failed[1], False, f"want stage {'/'.join(sorted(want[0]))}"))
            elif not want[1].search(failed[1]):
                rows.append((m.name, failed[0], failed[1], False, f"want /{want[1].pattern}/ (cpu_reason)"))
            else:
                rows.append((m.name, failed[0], failed[1], True, ""))
    bad = print_table(rows)
    na = sum(1 for r in rows if r[1] == "n/a")
    print(f"\n{len(rows) - bad} of {len(rows)} as expected ({na} not applicable on the CPU engine, "
          f"{na_unsupported} of them refused as unsupported)")
    return 1 if bad else 0


def mode_judge(records_path, pairs):
    with open(records_path) as f:
        records = json.load(f)
    by_path = {r.get("candidate"): r for r in records}
    rows = []
    for pair in pairs:
        candidate, _, name = pair.partition("=")
        rec = by_path.get(candidate)
        if name.startswith("solution"):
            stage, reason, ok, note = judge_solution(rec)
        else:
            stage, reason, ok, note = judge_kernel(Kernel(name), rec)
        rows.append((name, stage, reason, ok, note))
    return 1 if print_table(rows) else 0


def main(argv):
    usage = "usage: adversarial.py gpu|static|cpu <ptxforge> [name...] | judge <records.json> <candidate=name>..."
    if len(argv) < 2:
        print(usage, file=sys.stderr)
        return 2
    mode, arg, rest = argv[0], argv[1], argv[2:]
    if mode == "gpu":
        return mode_gpu(arg, rest)
    if mode == "static":
        return mode_static(arg, rest)
    if mode == "cpu":
        return mode_cpu(arg, rest)
    if mode == "judge":
        return mode_judge(arg, rest)
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
