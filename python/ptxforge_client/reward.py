"""reward(record): one verdict of `ptxforge serve` as a scalar for reinforcement learning.

A reward is what a policy learns to maximise, so every way to earn it without writing a fast,
correct kernel is a way the policy will find. The shaping below follows from that:

- No verdict, no reward: a record that was not verified (no device, the server could not start
  a worker), or one that is malformed or contradicts itself, gives None. The trainer must drop
  or re-run that sample: reading it as 0 would make that outcome a safe middle ground.
- A kernel the CPU engine does not run (failure kind "unsupported") is scored as a failed verify
  by default (UNSUPPORTED). The candidate chose the instruction, so a None here would be a hedge:
  a wrong kernel plus one dead instruction the engine lacks would turn a penalty into a dropped
  sample. A trainer that re-runs such samples on a GPU passes unsupported=None to get None.
- A failure costs a stated penalty per stage (PENALTIES). Later stages cost less, so a candidate
  that assembles earns more than one that does not, with two exceptions: failing `prove` (correct
  output without the instruction family the task requires) costs as much as failing to assemble,
  so skipping the hard instruction never pays better than an honest attempt that reached verify;
  and failing `time` is the worst of all, because the time stage fails on an impossible or
  suspicious time, which means cheating or a broken measurement. A record with flags (a
  suspicious time let through) is scored as a failed time stage.
- A candidate that passed earns CORRECT. Speed counts only when it passed, was verified on a GPU
  (gpu_verified true and verified_by "gpu"), its time stage passed, and it has no flags; then the
  bonus is SPEED_SLOPE * log2(speedup), clipped to [SPEED_MIN, SPEED_MAX]. A CPU-engine verdict
  has no timing and gets CORRECT alone, whatever a record claims about speed. The clip keeps a
  measurement outlier from dwarfing correctness; the log makes 2x over the baseline worth the
  same wherever the baseline is.
- Where several stages failed (a record that also says passed), the worst penalty applies:
  contradictions never raise the reward.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Tuple

__all__ = ["reward", "explain", "PENALTIES", "CORRECT", "SPEED_SLOPE", "SPEED_MIN", "SPEED_MAX", "UNSUPPORTED"]

CORRECT = 1.0
SPEED_SLOPE = 0.25  # per doubling of the speedup
SPEED_MIN = -0.25   # 4x slower than the baseline or worse: still far above any failure
SPEED_MAX = 0.5     # 4x faster or more
PENALTIES = {
    "time": -1.0,      # an impossible or suspicious time (also: flags present): the worst
    "check": -0.9,     # the PTX does not parse or validate, or the launch spec is wrong
    "assemble": -0.8,  # ptxas rejects it
    "prove": -0.8,     # correct, but without the required instructions: no better than not assembling
    "verify": -0.6,    # wrong output, a fault, a crash, a hang
    "sanitize": -0.6,  # right output with a memory error or race: as wrong as a wrong output
}
# The default for a kernel the CPU engine does not run: a failed verify (see above).
UNSUPPORTED = PENALTIES["verify"]
# Failure kinds that are the server's, never the candidate's: no verdict.
_NOT_A_VERDICT = {"driver"}
_DEFAULT = object()  # unsupported= not given
_REQUIRED = (("passed", bool), ("gpu_verified", bool), ("verified_by", str), ("stages", list), ("flags", list))


def reward(record: Any, baseline: str = "reference", unsupported: Any = _DEFAULT) -> Optional[float]:
    """The scalar for one record (or a run view holding one); None when there is no verdict.

    baseline: "reference" (nvcc's kernel for the task, timed on every task) or "library" (the
    vendor library where the task names one, else the reference).
    unsupported: the reward of a kernel the CPU engine does not run (default UNSUPPORTED, a
    failed verify); None for a trainer that re-runs those samples on a GPU.
    """
    return explain(record, baseline, unsupported)[0]


def explain(record: Any, baseline: str = "reference", unsupported: Any = _DEFAULT) -> Tuple[Optional[float], str]:
    """reward() and the reason for it in a few words, for logs and tables."""
    if baseline not in ("reference", "library"):
        raise ValueError("baseline is 'reference' or 'library'")
    if unsupported is _DEFAULT:
        unsupported = UNSUPPORTED
    elif unsupported is not None and not (isinstance(unsupported, (int, float)) and not isinstance(unsupported, bool)
                                          and math.isfinite(unsupported)):
        raise ValueError("unsupported is a finite number or None")
    try:
        return _score(record, baseline, unsupported)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        # Whatever shape a record has, a malformed one is "no verdict", never an exception.
        return None, f"malformed record ({type(e).__name__})"


def _status(stage: dict) -> str:
    s = stage["status"]
    if not isinstance(s, str) or not isinstance(stage["name"], str):
        raise TypeError("stage")
    # run --json writes "FAILED" and "not run"; the API names them "failed" and "not_run".
    return s.strip().lower().replace(" ", "_")


def _score(record: Any, baseline: str, unsupported: Optional[float]) -> Tuple[Optional[float], str]:
    if isinstance(record, dict) and "passed" not in record and isinstance(record.get("record"), dict):
        record = record["record"]  # a run view: its record
    if not isinstance(record, dict):
        return None, "no record"
    for key, typ in _REQUIRED:
        if key not in record:
            return None, f"no '{key}'"
        if not isinstance(record[key], typ):
            return None, f"'{key}' is not a {typ.__name__}"
    stages = {}
    for st in record["stages"]:
        status = _status(st)
        if stages.get(st["name"]) != "failed":  # a stage listed twice counts as failed if either failed
            stages[st["name"]] = status
    failure = record.get("failure")
    kind = failure.get("kind") if isinstance(failure, dict) else None

    failed = [name for name, status in stages.items() if status == "failed" and name in PENALTIES]
    if kind in _NOT_A_VERDICT and set(failed) <= {"verify"}:
        return None, f"not verified ({kind})"
    if kind == "unsupported" and set(failed) <= {"verify"} and not record["flags"]:
        if unsupported is None:
            return None, "not verified (unsupported by the CPU engine)"
        return float(unsupported), "not verified: the CPU engine does not run it (scored as a failed verify)"
    if record["flags"]:
        failed.append("time")  # a suspicious time let through is a failed time stage
    if failed:
        worst = min(failed, key=lambda n: PENALTIES[n])
        return PENALTIES[worst], f"{worst} failed"

    passed = record["passed"]
    verified_by = record["verified_by"]
    if not passed:
        return None, "not verified"  # nothing failed and nothing passed: no verdict
    if stages.get("verify") != "passed" or verified_by not in ("gpu", "cpu_engine"):
        return None, "inconsistent: passed without a passing verify"
    if not (record["gpu_verified"] and verified_by == "gpu"):
        return CORRECT, "correct (CPU engine: no speed term)"
    if stages.get("time") != "passed":
        return CORRECT, "correct (not timed)"
    speedup = _speedup(record["time"], baseline)
    if speedup is None:
        return PENALTIES["time"], "time passed with an impossible measurement"
    bonus = min(SPEED_MAX, max(SPEED_MIN, SPEED_SLOPE * math.log2(speedup)))
    return CORRECT + bonus, f"correct, {speedup:.2f}x {baseline}"


def _finite_positive(x: Any) -> bool:
    """Whether a timing is possible; TypeError (a malformed record) when it is not a number."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        raise TypeError("a timing is not a number")
    return math.isfinite(x) and x > 0


def _speedup(time: dict, baseline: str) -> Optional[float]:
    """The speedup against the baseline: the API's summary key where present, else the geometric
    mean over size sets of baseline median / candidate median (as the agent's summaries compute
    it). None for a measurement that cannot be real (zero, negative, not finite)."""
    if not isinstance(time, dict):
        raise TypeError("time")
    keys = ["speedup_vs_library", "speedup_vs_reference"] if baseline == "library" else ["speedup_vs_reference"]
    for key in keys:
        if key in time and time[key] is not None:
            return float(time[key]) if _finite_positive(time[key]) else None
    sizes = time["sizes"]
    if not isinstance(sizes, list) or not sizes:
        raise ValueError("no timed sizes")
    use_library = baseline == "library" and all(isinstance(s.get("library"), dict) for s in sizes)
    logs = []
    for s in sizes:
        base = s["library"] if use_library else s["reference"]
        cand, ref = s["candidate"]["median_ms"], base["median_ms"]
        if not (_finite_positive(cand) and _finite_positive(ref)):
            return None
        logs.append(math.log(ref / cand))
    return math.exp(sum(logs) / len(logs))
