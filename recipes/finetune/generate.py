#!/usr/bin/env python3
"""A ptxforge `cmd:` model: a base model (and a LoRA adapter) answering one request.

  ptxforge compile saxpy --model \\
      'cmd:python3 recipes/finetune/generate.py --base-model /models/Qwen2.5-Coder-7B-Instruct --adapter runs/q7/adapter'

Reads the request JSON on stdin:
  {"messages": [{"role": ..., "content": ...}], "temperature": 0.2, "max_tokens": 32768, "sample": 0, "round": 0}
and writes the reply text on stdout (everything else goes to stderr). The prompt is formatted as
train.py formatted it (chat.py; the format is read from the adapter's chat_format.json). The seed
derives from --seed, sample and round, so a request is answered the same way each time.
Nothing is downloaded: --base-model is a local directory (default: the adapter's base).
"""

import argparse
import contextlib
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-model", default=None, help="local model directory (default: the adapter's base_model_name_or_path)")
    p.add_argument("--adapter", default=None, help="LoRA adapter directory from train.py (omit for the base alone)")
    p.add_argument("--max-new-tokens", type=int, default=4096, help="cap on the request's max_tokens")
    p.add_argument("--top-p", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0, help="base seed; sample and round are mixed in")
    p.add_argument("--chat-format", default=None, choices=["auto", "template", "fallback"],
                   help="default: the adapter's chat_format.json, else auto")
    p.add_argument("--dtype", default="auto", choices=["auto", "bf16", "fp32"])
    p.add_argument("--device", default="auto")
    p.add_argument("--request", default="-", help="request JSON file ('-': stdin)")
    args = p.parse_args(argv)
    if not args.base_model and not args.adapter:
        p.error("give --base-model, --adapter or both")
    return args


def read_request(source):
    text = sys.stdin.read() if source == "-" else open(source, encoding="utf-8").read()
    request = json.loads(text)
    if not isinstance(request, dict):
        raise ValueError("the request must be a JSON object")
    chat.validate_messages(request.get("messages"), "request")
    return request


def request_seed(base_seed, request):
    return (base_seed * 1_000_003 + int(request.get("sample") or 0) * 10_007 + int(request.get("round") or 0)) % (2**31)


def base_of_adapter(adapter):
    path = os.path.join(adapter, "adapter_config.json")
    if not os.path.isfile(path):
        raise ValueError(f"--adapter {adapter}: no adapter_config.json")
    with open(path, encoding="utf-8") as f:
        base = json.load(f).get("base_model_name_or_path")
    if not base:
        raise ValueError(f"{path} names no base model: give --base-model")
    return base


def load(args):
    """(model, tokenizer, chat format)."""
    from peft import PeftModel

    base = args.base_model or base_of_adapter(args.adapter)
    device = chat.pick_device(args.device)
    dtype = chat.pick_dtype(args.dtype, device)
    tokenizer = chat.load_tokenizer(args.adapter if chat.has_tokenizer(args.adapter) else base)
    model = chat.load_base_model(base, dtype, device)
    if args.adapter:
        chat.require_local_dir(args.adapter, "adapter")
        model = PeftModel.from_pretrained(model, args.adapter).to(device)
    model.eval()
    chat_format = chat.resolve_format(tokenizer, args.chat_format or chat.load_format(args.adapter) or "auto")
    return model, tokenizer, chat_format


def answer(args, request):
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    model, tokenizer, chat_format = load(args)
    seed = request_seed(args.seed, request)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    max_new = min(int(request.get("max_tokens") or args.max_new_tokens), args.max_new_tokens)
    temperature = float(request.get("temperature") or 0.0)
    text, prompt_tokens = chat.generate_reply(model, tokenizer, chat_format, request["messages"], max_new,
                                              temperature, args.top_p)
    print(f"generate.py: {prompt_tokens} prompt tokens, {len(text)} reply characters, seed {seed}", file=sys.stderr)
    return text


def main(argv=None):
    args = parse_args(argv)
    try:
        request = read_request(args.request)
        with contextlib.redirect_stdout(sys.stderr):  # stdout carries the reply alone
            text = answer(args, request)
    except (ValueError, OSError) as e:
        print(f"generate.py: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
