"""Shared pieces of the LoRA recipe: chat formatting, masking, PTX extraction and checking.

Everything at the top level here needs only the standard library, so the formatting and
checking logic can be tested without torch. Functions that need torch, transformers or peft
import them inside, when called.

Chat formats:
  template  the tokenizer's own chat template (tokenizer.chat_template), e.g. Qwen2.5's.
  fallback  a simple role-tagged format for tokenizers without a template:
                <|system|>\\n...<|end|>\\n<|user|>\\n...<|end|>\\n<|assistant|>\\n...<|end|></s>\\n
            The generation prompt is "<|assistant|>\\n".
  auto      template when the tokenizer has one, else fallback.
The format a run trained with is saved beside the adapter (chat_format.json) so generate.py
formats prompts exactly the same way.
"""

import json
import os
import subprocess
import tempfile

ROLES = ("system", "user", "assistant")
END_TAG = "<|end|>"
FORMAT_FILE = "chat_format.json"
# Tokens that end a turn in common chat templates; those present in a vocabulary stop generation.
TURN_END_TOKENS = ("<|end|>", "<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<end_of_turn>", "<|eom_id|>")
# Fenced-block languages that may hold PTX (as ptxforge's own extractor takes them).
PTX_LANGS = ("", "ptx", "asm", "nasm", "text", "plaintext")


def role_tag(role):
    return f"<|{role}|>"


# ---------------------------------------------------------------------------------------------
# Data


def load_jsonl(path):
    """Records of a chat JSONL file: each line {"messages": [{"role", "content"}, ...], ...}."""
    records = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not JSON: {e}") from e
            validate_messages(record.get("messages") if isinstance(record, dict) else None, f"{path}:{lineno}")
            records.append(record)
    return records


def validate_messages(messages, where):
    if not isinstance(messages, list) or not messages:
        raise ValueError(f"{where}: 'messages' must be a non-empty list")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(m.get("content"), str):
            raise ValueError(f"{where}: message {i} needs a role in {ROLES} and a string content")


def split_prompt(messages):
    """(the messages before the last assistant turn, that turn's content), or None without one."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i]["role"] == "assistant":
            return (messages[:i], messages[i]["content"]) if i > 0 else None
    return None


# ---------------------------------------------------------------------------------------------
# Formatting and masking


def resolve_format(tokenizer, requested="auto"):
    has_template = bool(getattr(tokenizer, "chat_template", None))
    if requested == "auto":
        return "template" if has_template else "fallback"
    if requested == "template" and not has_template:
        raise ValueError("--chat-format template: the tokenizer has no chat template")
    if requested not in ("template", "fallback"):
        raise ValueError(f"unknown chat format '{requested}'")
    return requested


def save_format(directory, chat_format):
    with open(os.path.join(directory, FORMAT_FILE), "w", encoding="utf-8") as f:
        json.dump({"chat_format": chat_format}, f)


def load_format(directory):
    """The chat format saved beside an adapter, or None."""
    path = os.path.join(directory, FORMAT_FILE) if directory else ""
    if not path or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f).get("chat_format")


def fallback_segments(messages, add_generation_prompt, eos_token):
    """[(text, trainable)] of the role-tagged format; assistant contents and their end are trainable."""
    segments = []
    for m in messages:
        if m["role"] == "assistant":
            segments.append((role_tag("assistant") + "\n", False))
            segments.append((m["content"] + END_TAG + (eos_token or ""), True))
            segments.append(("\n", False))
        else:
            segments.append((role_tag(m["role"]) + "\n" + m["content"] + END_TAG + "\n", False))
    if add_generation_prompt:
        segments.append((role_tag("assistant") + "\n", False))
    return segments


def template_segments(tokenizer, messages, add_generation_prompt):
    """[(text, trainable)] through the tokenizer's chat template.

    Each assistant turn's span is found by rendering the conversation up to it: the text added
    by the turn (its content and the template's end-of-turn marker) is trainable. A template
    that rewrites earlier turns falls back to marking the content alone.
    """

    def render(msgs, gen):
        return tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=gen)

    full = render(messages, add_generation_prompt)
    segments, pos = [], 0
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        prefix = render(messages[:i], True) if i > 0 else ""
        upto = render(messages[: i + 1], False)
        if full.startswith(upto) and upto.startswith(prefix) and len(prefix) >= pos:
            start, end = len(prefix), len(upto)
        else:
            start = full.find(m["content"], pos)
            if start < 0:
                continue
            end = start + len(m["content"])
        segments.append((full[pos:start], False))
        segments.append((full[start:end], True))
        pos = end
    segments.append((full[pos:], False))
    return [s for s in segments if s[0]]


def render_segments(tokenizer, messages, chat_format, add_generation_prompt):
    if chat_format == "template":
        return template_segments(tokenizer, messages, add_generation_prompt)
    return fallback_segments(messages, add_generation_prompt, getattr(tokenizer, "eos_token", None))


def render_text(tokenizer, messages, chat_format, add_generation_prompt):
    return "".join(t for t, _ in render_segments(tokenizer, messages, chat_format, add_generation_prompt))


def leading_ids(tokenizer, chat_format):
    """The fallback format starts with the tokenizer's BOS when it has one; templates write their own."""
    bos = getattr(tokenizer, "bos_token_id", None)
    return [bos] if chat_format == "fallback" and bos is not None else []


def encode_segments(tokenizer, segments, chat_format):
    """(input ids, labels): each segment tokenized on its own, labels -100 outside trainable ones."""
    ids = leading_ids(tokenizer, chat_format)
    labels = [-100] * len(ids)
    for text, trainable in segments:
        piece = tokenizer.encode(text, add_special_tokens=False)
        ids.extend(piece)
        labels.extend(piece if trainable else [-100] * len(piece))
    return ids, labels


def encode_example(tokenizer, messages, chat_format, max_len):
    """(input ids, labels) of a training conversation cut to max_len, or None if nothing is trainable."""
    segments = render_segments(tokenizer, messages, chat_format, add_generation_prompt=False)
    ids, labels = encode_segments(tokenizer, segments, chat_format)
    ids, labels = ids[:max_len], labels[:max_len]
    if all(label == -100 for label in labels):
        return None
    return ids, labels


def encode_prompt(tokenizer, messages, chat_format):
    """Input ids of a prompt, ending with the generation prompt: tokenized as in training."""
    segments = render_segments(tokenizer, messages, chat_format, add_generation_prompt=True)
    return encode_segments(tokenizer, segments, chat_format)[0]


def stop_token_ids(tokenizer, model=None):
    """EOS ids of the tokenizer and the model's generation config, and any turn-end token in the vocabulary."""
    ids = set()
    if getattr(tokenizer, "eos_token_id", None) is not None:
        ids.add(tokenizer.eos_token_id)
    gen_config = getattr(model, "generation_config", None) if model is not None else None
    eos = getattr(gen_config, "eos_token_id", None)
    if isinstance(eos, int):
        ids.add(eos)
    elif isinstance(eos, (list, tuple)):
        ids.update(e for e in eos if isinstance(e, int))
    vocab = tokenizer.get_vocab()
    ids.update(vocab[t] for t in TURN_END_TOKENS if t in vocab)
    return sorted(ids)


def clean_reply(text):
    """The reply up to the fallback's end tag (when it is not a special token), trimmed."""
    cut = text.find(END_TAG)
    return (text[:cut] if cut >= 0 else text).strip()


# ---------------------------------------------------------------------------------------------
# PTX extraction and checking


def fenced_blocks(text):
    """[(lang, body, closed)] of ``` or ~~~ fenced blocks; an unclosed last block runs to the end."""
    blocks, lang, body, fence = [], None, [], ""
    for line in text.split("\n"):
        t = line.strip()
        is_fence = t.startswith("```") or t.startswith("~~~")
        if lang is None and is_fence:
            fence, lang, body = t[:3], t[3:].strip().lower(), []
        elif lang is not None and is_fence and t.startswith(fence) and not t[3:].strip():
            blocks.append((lang, "\n".join(body) + "\n", True))
            lang = None
        elif lang is not None:
            body.append(line)
    if lang is not None:
        blocks.append((lang, "\n".join(body) + "\n", False))
    return blocks


def extract_ptx(text):
    """The PTX of a reply: the last fenced PTX-ish block with an .entry, else the largest ```ptx
    block, else the whole text (as ptxforge's extractor chooses, without its header repairs)."""
    blocks = fenced_blocks(text)
    with_kernel = [b for lang, b, _ in blocks if lang in PTX_LANGS and ".entry" in b]
    if with_kernel:
        return with_kernel[-1]
    ptx_blocks = [b for lang, b, _ in blocks if lang in ("ptx", "asm")]
    if ptx_blocks:
        return max(ptx_blocks, key=len)
    return text


def check_ptx(ptxforge, code, ptxas=False, timeout=120):
    """`ptxforge check --format json` on one module.

    Returns {"accepted": exit code 0 (with --ptxas: both front end and ptxas accept),
    "check_ok": ptxforge's front end had no errors, "ptxas_ok": ptxas's verdict or None,
    "rc": the exit code, "error": why no verdict came, or None}.
    """
    result = {"accepted": False, "check_ok": False, "ptxas_ok": None, "rc": None, "error": None}
    if not code.strip():
        result["error"] = "empty"
        return result
    with tempfile.TemporaryDirectory(prefix="ptxcheck-") as tmp:
        path = os.path.join(tmp, "candidate.ptx")
        with open(path, "w", encoding="utf-8") as f:
            f.write(code)
        cmd = [ptxforge, "check", "--format", "json"] + (["--ptxas"] if ptxas else []) + [path]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            result["error"] = "timeout"
            return result
        except OSError as e:
            result["error"] = str(e)
            return result
    result["rc"] = proc.returncode
    result["accepted"] = proc.returncode == 0
    if proc.returncode not in (0, 1):
        result["error"] = (proc.stderr.strip() or f"exit code {proc.returncode}")[-500:]
    record = parse_check_json(proc.stdout)
    if record is None:
        result["check_ok"] = proc.returncode == 0
    else:
        result["check_ok"] = bool(record.get("readable", True)) and record.get("errors", 1) == 0
        if isinstance(record.get("ptxas"), dict):
            result["ptxas_ok"] = bool(record["ptxas"].get("ok"))
    return result


def parse_check_json(stdout):
    """The first file record of `check --format json`, or None."""
    try:
        data = json.loads(stdout)
    except (json.JSONDecodeError, TypeError):
        return None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return data[0]
    return None


def score_replies(replies, ptxforge, ptxas=False):
    """Fractions of replies whose extracted PTX is accepted; per-reply verdicts in "verdicts"."""
    verdicts = [check_ptx(ptxforge, extract_ptx(r), ptxas) for r in replies]
    n = max(len(verdicts), 1)
    ptxas_seen = [v["ptxas_ok"] for v in verdicts if v["ptxas_ok"] is not None]
    return {
        "accept_rate": sum(v["accepted"] for v in verdicts) / n,
        "check_rate": sum(v["check_ok"] for v in verdicts) / n,
        "ptxas_rate": (sum(ptxas_seen) / n) if ptxas_seen else None,
        "check_errors": sorted({v["error"] for v in verdicts if v["error"] and v["error"] != "empty"}),
        "verdicts": verdicts,
    }


# ---------------------------------------------------------------------------------------------
# Loading and generation (torch, transformers, peft imported when called)


def pick_device(name="auto"):
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def pick_dtype(name, device):
    """bf16 on a GPU that supports it (auto), else fp32."""
    import torch

    if name == "fp32":
        return torch.float32
    bf16_ok = device.type == "cuda" and torch.cuda.is_bf16_supported()
    if name == "bf16":
        if device.type == "cuda" and not bf16_ok:
            raise ValueError("--dtype bf16: this GPU does not support bf16")
        return torch.bfloat16
    return torch.bfloat16 if bf16_ok else torch.float32


def dtype_kwargs(dtype):
    """from_pretrained's dtype argument: `dtype` from transformers 4.56, `torch_dtype` before."""
    import transformers

    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def require_local_dir(path, what):
    if not os.path.isdir(path):
        raise ValueError(f"{what} '{path}' is not a local directory (nothing is downloaded)")


def load_tokenizer(path):
    """A tokenizer from a local directory; a plain tokenizers-library one loads as PreTrainedTokenizerFast."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    require_local_dir(path, "tokenizer")
    config_path = os.path.join(path, "tokenizer_config.json")
    cls_name = None
    if os.path.isfile(config_path):
        with open(config_path, encoding="utf-8") as f:
            cls_name = json.load(f).get("tokenizer_class")
    if cls_name in ("PreTrainedTokenizerFast", "TokenizersBackend"):
        return PreTrainedTokenizerFast.from_pretrained(path, local_files_only=True)
    return AutoTokenizer.from_pretrained(path, local_files_only=True)


def load_base_model(path, dtype, device):
    from transformers import AutoModelForCausalLM

    require_local_dir(path, "base model")
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, **dtype_kwargs(dtype))
    return model.to(device)


def has_tokenizer(directory):
    return bool(directory) and (
        os.path.isfile(os.path.join(directory, "tokenizer.json"))
        or os.path.isfile(os.path.join(directory, "tokenizer_config.json"))
    )


def context_limit(model):
    config = getattr(model, "config", None)
    return getattr(config, "max_position_embeddings", None) if config is not None else None


def generate_reply(model, tokenizer, chat_format, messages, max_new_tokens, temperature=0.0, top_p=0.95):
    """One completion for a conversation; greedy when temperature <= 0. Returns (text, prompt tokens)."""
    import torch

    ids = encode_prompt(tokenizer, messages, chat_format)
    limit = context_limit(model)
    if limit and len(ids) + max_new_tokens > limit:
        # Past the context: at most half of it for the reply, and the prompt's start cut off.
        max_new_tokens = max(1, limit - len(ids), min(max_new_tokens, limit // 2))
        ids = ids[-(limit - max_new_tokens):]
    device = next(model.parameters()).device
    input_ids = torch.tensor([ids], dtype=torch.long, device=device)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    kwargs = {"max_new_tokens": max_new_tokens, "eos_token_id": stop_token_ids(tokenizer, model), "pad_token_id": pad_id}
    if temperature > 0:
        kwargs.update(do_sample=True, temperature=temperature, top_p=top_p)
    else:
        kwargs.update(do_sample=False)
    with torch.no_grad():
        out = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kwargs)
    text = tokenizer.decode(out[0, len(ids):].tolist(), skip_special_tokens=True)
    return clean_reply(text), len(ids)
