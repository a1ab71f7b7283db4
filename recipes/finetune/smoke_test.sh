#!/usr/bin/env bash
# Smoke test of the LoRA recipe, with nothing downloaded: a tiny chat dataset of PTX replies, a
# tiny random Llama-style model, a few dozen LoRA steps, then one generate.py request.
#
#   recipes/finetune/smoke_test.sh [PTXFORGE]
#
# PTXFORGE: the ptxforge binary for the `check` metric (skipped without it).
# Environment: PYTHON (default python3), SMOKE_DIR (keep the run there; default a temp dir,
# removed afterwards), SMOKE_STEPS (default 60), SMOKE_MAX_LOSS_RATIO (last/first training
# loss must be below it; default 0.9).
# Exit codes: 0 passed, 1 failed, 77 torch, transformers, peft or tokenizers is missing (skip).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PYTHON=${PYTHON:-python3}
PTXFORGE=${1:-}
STEPS=${SMOKE_STEPS:-60}
MAX_RATIO=${SMOKE_MAX_LOSS_RATIO:-0.9}
START=$SECONDS

fail() { echo "smoke: FAILED: $*" >&2; exit 1; }

if [[ -n "$PTXFORGE" ]]; then
  [[ -x "$PTXFORGE" ]] || fail "'$PTXFORGE' is not an executable ptxforge binary"
  PTXFORGE=$(cd "$(dirname "$PTXFORGE")" && pwd)/$(basename "$PTXFORGE")
fi

# The standard-library tests of the shared module run everywhere.
if ! UNIT=$(PTXFORGE="$PTXFORGE" "$PYTHON" "$HERE/test_chat.py" 2>&1); then
  echo "$UNIT" >&2
  fail "test_chat.py"
fi
echo "smoke: test_chat.py: $(echo "$UNIT" | grep -E '^(Ran|OK|FAILED)' | tr '\n' ' ')"

if ! VERSIONS=$("$PYTHON" -c "import torch, transformers, peft, tokenizers as t; print('torch', torch.__version__, \
'transformers', transformers.__version__, 'peft', peft.__version__, 'tokenizers', t.__version__, \
'cuda', torch.cuda.is_available())" 2>/dev/null); then
  echo "smoke: skipped: torch, transformers, peft or tokenizers is not importable by $PYTHON" >&2
  exit 77
fi
echo "smoke: $VERSIONS"

if [[ -n "${SMOKE_DIR:-}" ]]; then
  WORK=$SMOKE_DIR
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/ptxforge-finetune-smoke.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1

# --- the dataset: prompts for three kernels, each answered by a small valid PTX module --------
"$PYTHON" - "$REPO" "$WORK" <<'EOF'
import json, os, sys

repo, work = sys.argv[1], sys.argv[2]
FALLBACK = ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry k(.param .u64 p)\n{\n\tret;\n}\n"
kernels = [
    ("vector_add", "examples/vector_add.ptx", "c[i] = a[i] + b[i] for every i < n"),
    ("saxpy", "tasks/level1/saxpy/solution.ptx", "y[i] = alpha * x[i] + y[i] for every i < n"),
    ("gelu", "tasks/level1/gelu/solution.ptx", "y[i] = gelu(x[i]) for every i < n"),
]
train_prompts = [
    "Write PTX for {d}.", "Give me a PTX kernel that computes {d}.", "I need hand-written PTX: {d}.",
    "Implement {d} in PTX.", "PTX please: {d}", "Write an NVIDIA PTX module for {d}.",
    "Produce a PTX kernel named {name}: {d}.", "Could you write the PTX assembly for {d}?",
    "Emit PTX (not CUDA) for {d}.", "Write the PTX for the `{name}` kernel: {d}.",
    "As PTX, implement {d}.", "Hand-write {d} in PTX ISA 8.0.",
]
valid_prompts = ["Write PTX code for {d}.", "Show me PTX that does {d}."]
system = "You write PTX for NVIDIA GPUs. Answer with the complete module in one ```ptx block."

def read(path):
    full = os.path.join(repo, path)
    return open(full).read() if os.path.isfile(full) else FALLBACK

def write(name, prompts):
    with open(os.path.join(work, name), "w") as f:
        for kernel, path, desc in kernels:
            reply = "Here is the kernel.\n\n```ptx\n" + read(path) + "```"
            for p in prompts:
                messages = [{"role": "system", "content": system},
                            {"role": "user", "content": p.format(d=desc, name=kernel)},
                            {"role": "assistant", "content": reply}]
                f.write(json.dumps({"messages": messages, "kernel": kernel}) + "\n")

write("train.jsonl", train_prompts)
write("valid.jsonl", valid_prompts)
print(f"smoke: dataset: {len(kernels) * len(train_prompts)} train, {len(kernels) * len(valid_prompts)} valid")
EOF

# --- training -----------------------------------------------------------------------------------
CHECK_ARGS=()
[[ -n "$PTXFORGE" ]] && CHECK_ARGS=(--ptxforge "$PTXFORGE")
T0=$SECONDS
"$PYTHON" "$HERE/train.py" --train "$WORK/train.jsonl" --valid "$WORK/valid.jsonl" --base-model tiny: \
  --out "$WORK/out" --max-steps "$STEPS" --batch-size 8 --grad-accum 1 --lr 5e-3 \
  --lora-r 16 --lora-alpha 32 --max-len 1024 --log-every 1 \
  --eval-every 20 --eval-prompts 3 --eval-max-new-tokens 160 --patience 3 \
  "${CHECK_ARGS[@]}" >"$WORK/train.log" 2>&1 || { tail -n 40 "$WORK/train.log" >&2; fail "train.py"; }
echo "smoke: trained in $((SECONDS - T0)) s"

"$PYTHON" - "$WORK/out" "$MAX_RATIO" "${PTXFORGE:+check}" <<'EOF' || fail "the training checks"
import json, os, sys

out, max_ratio, with_check = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "check"
m = json.load(open(os.path.join(out, "metrics.json")))
first, last = m["train"][0]["loss"], m["train"][-1]["loss"]
print(f"smoke: loss {first:.3f} at step {m['train'][0]['step']} -> {last:.3f} at step {m['train'][-1]['step']} "
      f"(ratio {last / first:.2f}); {len(m['evals'])} evaluations; stopped: {m['stopped']}")
for e in m["evals"]:
    rate = e.get("accept_rate")
    print(f"smoke:   eval step {e['step']}: valid loss {e['valid_loss']:.3f}"
          + (f", check accepts {rate:.2f}" if rate is not None else "") + (" (best)" if e["improved"] else ""))
assert last < first * max_ratio, f"the training loss did not fall enough: {first} -> {last}"
assert m["evals"] and m["best"], "no evaluation"
if with_check:
    assert "accept_rate" in m["evals"][-1], "no check metric although ptxforge was given"
for f in ("adapter/adapter_config.json", "adapter/chat_format.json", "base/config.json"):
    assert os.path.isfile(os.path.join(out, f)), f"missing {f}"
weights = [f for f in os.listdir(os.path.join(out, "adapter")) if f.startswith("adapter_model.")]
assert weights, "no adapter weights"
EOF

# --- the template path, through transformers' apply_chat_template on the tiny tokenizer ---------
"$PYTHON" - "$HERE" "$WORK/out/base" <<'EOF2' || fail "the chat-template masking check"
import sys
sys.path.insert(0, sys.argv[1])
import chat

tok = chat.load_tokenizer(sys.argv[2])
assert chat.resolve_format(tok) == "fallback", "the tiny tokenizer has no template"
tok.chat_template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                     "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
msgs = [{"role": "user", "content": "Write PTX."}, {"role": "assistant", "content": "```ptx\nret;\n```"},
        {"role": "user", "content": "Again."}, {"role": "assistant", "content": "done"}]
ids, labels = chat.encode_example(tok, msgs, "template", 4096)
got = tok.decode([i for i, l in zip(ids, labels) if l != -100])
assert got == "```ptx\nret;\n```<|im_end|>\ndone<|im_end|>\n", repr(got)
prompt = chat.encode_prompt(tok, msgs[:1], "template")
assert tok.decode(prompt) == "<|im_start|>user\nWrite PTX.<|im_end|>\n<|im_start|>assistant\n", repr(tok.decode(prompt))
print("smoke: chat-template masking ok")
EOF2

# --- generate.py as a ptxforge cmd: model ------------------------------------------------------
REQUEST='{"messages": [{"role": "system", "content": "You write PTX for NVIDIA GPUs."},
  {"role": "user", "content": "Write PTX for c[i] = a[i] + b[i] for every i < n."}],
  "temperature": 0.2, "max_tokens": 128, "sample": 1, "round": 0}'
T0=$SECONDS
echo "$REQUEST" | "$PYTHON" "$HERE/generate.py" --base-model "$WORK/out/base" --adapter "$WORK/out/adapter" \
  >"$WORK/reply1.txt" 2>"$WORK/generate1.log" || { cat "$WORK/generate1.log" >&2; fail "generate.py exited non-zero"; }
[[ -n "$(tr -d '[:space:]' <"$WORK/reply1.txt")" ]] || { cat "$WORK/generate1.log" >&2; fail "generate.py printed no text"; }
echo "smoke: generate.py answered in $((SECONDS - T0)) s: $(head -c 300 "$WORK/reply1.txt" | tr '\n' ' ')"
# The base named by the adapter, and the same seed: the same reply.
echo "$REQUEST" | "$PYTHON" "$HERE/generate.py" --adapter "$WORK/out/adapter" \
  >"$WORK/reply2.txt" 2>"$WORK/generate2.log" || { cat "$WORK/generate2.log" >&2; fail "generate.py --adapter alone"; }
cmp -s "$WORK/reply1.txt" "$WORK/reply2.txt" || fail "the same request gave two different replies"

echo "smoke: passed in $((SECONDS - START)) s"
