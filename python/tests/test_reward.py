"""reward(): every branch pinned with hand-made records, including records made to game it.

The records follow `ptxforge run --json` (docs/json.md): stage statuses as run writes them
("FAILED", "not run") and as the API names them ("failed", "not_run") both read the same."""

from __future__ import annotations

import copy
import math

import pytest

from ptxforge_client import CORRECT, PENALTIES, SPEED_MAX, SPEED_MIN, UNSUPPORTED, explain, reward

STAGES = ("check", "assemble", "verify", "time", "prove")


def record(statuses=None, verified_by="cpu_engine", gpu_verified=False, passed=None, flags=(), time=None,
           failure=None) -> dict:
    """A record whose stages have the given statuses (default: all passed; time skipped on the
    CPU engine). passed defaults to what the stages imply."""
    st = {n: "passed" for n in STAGES}
    if verified_by != "gpu":
        st["time"] = "skipped"
    st.update(statuses or {})
    if passed is None:
        passed = all(s in ("passed", "skipped") for s in st.values()) and st["verify"] == "passed"
    r = {
        "task": "vector_add", "arch": "sm_90a", "seed": "42",
        "verdict": "passed" if passed else "FAILED",
        "passed": passed, "gpu_verified": gpu_verified, "verified_by": verified_by,
        "stages": [{"name": n, "status": s, "summary": "", "seconds": 0.1} for n, s in st.items()],
        "flags": list(flags),
    }
    if time is not None:
        r["time"] = time
    if failure is not None:
        r["failure"] = failure
    return r


def timing(cand_ms, ref_ms, lib_ms=None) -> dict:
    sizes = []
    for i, (c, ref) in enumerate(zip(cand_ms, ref_ms)):
        s = {"size_set": f"s{i}", "candidate": {"median_ms": c}, "reference": {"median_ms": ref}}
        if lib_ms is not None:
            s["library"] = {"median_ms": lib_ms[i]}
        sizes.append(s)
    return {"sizes": sizes, "trials_pass": True}


def gpu_record(cand_ms=(1.0,), ref_ms=(2.0,), lib_ms=None, **kw) -> dict:
    return record(verified_by="gpu", gpu_verified=True, time=timing(cand_ms, ref_ms, lib_ms), **kw)


# ---- Verdicts ----

def test_cpu_engine_pass_is_correct_without_speed():
    assert reward(record()) == CORRECT


def test_real_cpu_record_shape(repo):
    # The shape `ptxforge run --json --device cpu` prints for the shipped solution.
    r = record()
    r["stages"][3]["summary"] = "not timed: CPU engine"
    r["verify"] = {"cases": [{"size_set": "held-back", "shown": False, "pass": True, "problems": []}]}
    assert explain(r) == (CORRECT, "correct (CPU engine: no speed term)")


@pytest.mark.parametrize("stage", ["check", "assemble", "verify", "prove"])
@pytest.mark.parametrize("spelling", ["FAILED", "failed"])
def test_each_failed_stage_has_its_penalty(stage, spelling):
    later = STAGES[STAGES.index(stage) + 1:]
    r = record({stage: spelling, **{n: "not run" for n in later if n != "time"}})
    assert reward(r) == PENALTIES[stage]


def test_sanitize_and_time_failures():
    r = gpu_record()
    r["stages"].insert(3, {"name": "sanitize", "status": "FAILED", "summary": "racecheck: 1 error", "seconds": 1})
    r["passed"] = False
    assert reward(r) == PENALTIES["sanitize"]
    assert reward(gpu_record(statuses={"time": "FAILED", "prove": "not_run"})) == PENALTIES["time"]


def test_penalty_order():
    p = PENALTIES
    assert p["time"] == min(p.values())  # an impossible or suspicious time is the worst
    assert p["check"] < p["assemble"] < p["verify"]
    assert p["prove"] <= p["assemble"]  # skipping the required instruction never beats an honest attempt
    assert max(p.values()) < 0 < CORRECT + SPEED_MIN


# ---- Speed ----

def test_gpu_speedup_bonus_is_log_scaled():
    assert reward(gpu_record(cand_ms=(1.0,), ref_ms=(2.0,))) == pytest.approx(CORRECT + 0.25)
    assert reward(gpu_record(cand_ms=(1.0,), ref_ms=(1.0,))) == pytest.approx(CORRECT)
    assert reward(gpu_record(cand_ms=(2.0,), ref_ms=(1.0,))) == pytest.approx(CORRECT - 0.25)


def test_speed_bonus_is_clipped():
    assert reward(gpu_record(cand_ms=(1.0,), ref_ms=(1000.0,))) == pytest.approx(CORRECT + SPEED_MAX)
    assert reward(gpu_record(cand_ms=(1000.0,), ref_ms=(1.0,))) == pytest.approx(CORRECT + SPEED_MIN)


def test_speedup_is_a_geometric_mean_over_size_sets():
    # 4x on one size set, 1x on the other: geomean 2x.
    assert reward(gpu_record(cand_ms=(1.0, 1.0), ref_ms=(4.0, 1.0))) == pytest.approx(CORRECT + 0.25)


def test_summary_speedup_key_and_library_baseline():
    r = gpu_record(cand_ms=(1.0,), ref_ms=(1.0,), lib_ms=(4.0,))
    assert reward(r) == pytest.approx(CORRECT)
    assert reward(r, baseline="library") == pytest.approx(CORRECT + 0.5)
    r["time"]["speedup_vs_reference"] = 2.0  # the API's summary key wins over the sizes
    assert reward(r) == pytest.approx(CORRECT + 0.25)
    with pytest.raises(ValueError):
        reward(r, baseline="fastest")


def test_untimed_gpu_pass_is_correct():
    r = gpu_record(statuses={"time": "skipped"})
    del r["time"]
    assert reward(r) == CORRECT


# ---- Records made to game it ----

def test_cpu_verified_with_a_huge_speedup_gets_no_speed():
    r = record(time=timing((0.001,), (1000.0,)), statuses={"time": "passed"})
    assert reward(r) == CORRECT
    r["time"]["speedup_vs_reference"] = 1e9
    assert reward(r) == CORRECT


def test_gpu_verified_false_with_verified_by_gpu_gets_no_speed():
    r = gpu_record(cand_ms=(0.001,), ref_ms=(1000.0,))
    r["gpu_verified"] = False
    assert reward(r) == CORRECT
    r = gpu_record(cand_ms=(0.001,), ref_ms=(1000.0,))
    r["verified_by"] = "cpu_engine"  # gpu_verified true but not verified by a GPU: no speed
    assert reward(r) == CORRECT


def test_flags_are_the_worst_penalty():
    r = gpu_record(cand_ms=(0.001,), ref_ms=(1000.0,), flags=["impossible time (let through by --allow-suspicious)"])
    assert r["passed"] is True
    assert reward(r) == PENALTIES["time"]
    assert reward(record(flags=["x"])) == PENALTIES["time"]


def test_passed_true_with_a_failed_stage_takes_the_penalty():
    assert reward(record({"verify": "FAILED"}, passed=True)) == PENALTIES["verify"]
    # Several failures: the worst applies, never the mildest.
    assert reward(record({"verify": "FAILED", "check": "FAILED"}, passed=True)) == PENALTIES["check"]
    r = gpu_record()
    r["stages"].append({"name": "verify", "status": "FAILED", "summary": "", "seconds": 0})  # listed twice
    assert reward(r) == PENALTIES["verify"]


def test_impossible_measurements_are_the_time_penalty():
    for cand in (0.0, -1.0, float("nan"), float("inf")):
        assert reward(gpu_record(cand_ms=(cand,), ref_ms=(1.0,))) == PENALTIES["time"], cand
    r = gpu_record()
    r["time"]["speedup_vs_reference"] = float("inf")
    assert reward(r) == PENALTIES["time"]
    r["time"]["speedup_vs_reference"] = True  # a bool is not a number: malformed
    assert reward(r) is None


def test_passed_without_a_passing_verify_is_no_verdict():
    assert reward(record({"verify": "skipped"}, passed=True)) is None
    r = record()
    r["verified_by"] = "none"
    assert reward(r) is None


def test_string_booleans_are_not_truthy():
    r = record()
    r["passed"] = "true"
    assert reward(r) is None
    r = gpu_record()
    r["gpu_verified"] = "yes"
    assert reward(r) is None


# ---- No verdict ----

def test_unsupported_by_the_engine_is_a_failed_verify_unless_the_trainer_reruns_it():
    # The CPU engine does not run an instruction: verify skipped, failure kind unsupported. The
    # candidate chose it: a wrong kernel plus one dead instruction the engine lacks must not turn
    # a penalty into a dropped sample.
    r = record({"verify": "skipped", "time": "not run", "prove": "not run"}, verified_by="none",
               failure={"kind": "unsupported", "message": "testp", "where": ""})
    assert r["passed"] is False
    assert reward(r) == UNSUPPORTED == PENALTIES["verify"]
    assert "CPU engine" in explain(r)[1]
    # A trainer that re-runs those samples on a GPU asks for None.
    assert reward(r, unsupported=None) is None
    assert reward(r, unsupported=-0.7) == -0.7
    with pytest.raises(ValueError):
        reward(r, unsupported=float("nan"))
    with pytest.raises(ValueError):
        reward(r, unsupported=True)


def test_not_verified_is_none():
    # No GPU or driver: even a verify marked failed is the server's problem, not the candidate's.
    r = record({"verify": "FAILED"}, verified_by="none", failure={"kind": "driver", "message": "", "where": ""})
    assert reward(r) is None
    # The server could not start a worker: nothing failed, nothing passed.
    r = record({"verify": "not run", "time": "not run", "prove": "not run"}, verified_by="none", passed=False)
    assert explain(r) == (None, "not verified")


def test_a_candidate_failure_kind_is_still_a_penalty():
    r = record({"verify": "FAILED"}, verified_by="none", failure={"kind": "timeout", "message": "hang", "where": ""})
    assert reward(r) == PENALTIES["verify"]
    # An unsupported instruction does not excuse a check that failed.
    r = record({"check": "FAILED"}, verified_by="none", failure={"kind": "unsupported", "message": "", "where": ""})
    assert reward(r) == PENALTIES["check"]


@pytest.mark.parametrize("key", ["passed", "gpu_verified", "verified_by", "stages", "flags"])
def test_missing_keys_are_none(key):
    r = gpu_record()
    del r[key]
    assert reward(r) is None


def test_malformed_records_are_none_never_an_exception():
    good = gpu_record()
    bad = [None, 3, "passed", [], {}, {"record": None}]
    r = copy.deepcopy(good); r["stages"] = [{"name": "verify"}]; bad.append(r)
    r = copy.deepcopy(good); r["stages"] = ["verify"]; bad.append(r)
    r = copy.deepcopy(good); r["stages"][0]["status"] = 7; bad.append(r)
    r = copy.deepcopy(good); del r["time"]; bad.append(r)  # timed on a GPU, no timings
    r = copy.deepcopy(good); r["time"] = {"sizes": []}; bad.append(r)
    r = copy.deepcopy(good); r["time"] = {"sizes": [{"candidate": {}}]}; bad.append(r)
    r = copy.deepcopy(good); r["time"] = "fast"; bad.append(r)
    r = copy.deepcopy(good); r["time"]["sizes"][0]["candidate"]["median_ms"] = "1"; bad.append(r)
    for b in bad:
        assert reward(b) is None, b


def test_a_run_view_is_read_through_its_record():
    assert reward({"id": "r1", "state": "done", "record": gpu_record()}) == pytest.approx(CORRECT + 0.25)
    assert reward({"id": "r1", "state": "queued"}) is None


def test_rewards_are_finite():
    for cand in (1e-300, 1e300):
        v = reward(gpu_record(cand_ms=(cand,), ref_ms=(1.0,)))
        assert v is not None and math.isfinite(v)
