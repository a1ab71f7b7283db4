#!/usr/bin/env python3
"""LoRA SFT on chat-format JSONL, with early stopping on the fraction of sampled replies that
`ptxforge check` accepts.

  python3 recipes/finetune/train.py --train train.jsonl --valid valid.jsonl \\
      --base-model /models/Qwen2.5-Coder-7B-Instruct --out runs/qwen7b-lora \\
      --ptxforge build/release/tools/ptxforge/ptxforge

--base-model is a local directory (nothing is downloaded) or `tiny:`, a tiny random Llama-style
model with a byte-level BPE tokenizer trained on the training data, saved to OUT/base.
Writes OUT/adapter (the best adapter, with its tokenizer and chat_format.json), OUT/metrics.json
(the loss and validation curves) and OUT/samples.jsonl (the sampled validation replies).
See README.md beside this file.
"""

import argparse
import json
import math
import os
import random
import sys
import time

# A run must never reach the hub: set before transformers and huggingface_hub are imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat  # noqa: E402  (the shared module beside this file)

TINY_SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>", chat.END_TAG]
TINY_TARGET_MODULES = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj,lm_head"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    io = p.add_argument_group("data and model")
    io.add_argument("--train", required=True, help="training JSONL: {\"messages\": [...]} per line")
    io.add_argument("--valid", required=True, help="validation JSONL (loss and sampled prompts)")
    io.add_argument("--base-model", required=True, help="a local model directory, or 'tiny:' for a tiny random model")
    io.add_argument("--out", required=True, help="output directory")
    io.add_argument("--chat-format", default="auto", choices=["auto", "template", "fallback"],
                    help="the tokenizer's chat template, or the role-tagged fallback (auto: template if it has one)")
    io.add_argument("--max-len", type=int, default=4096, help="tokens per training example (longer ones are cut)")

    lora = p.add_argument_group("LoRA")
    lora.add_argument("--lora-r", type=int, default=64)
    lora.add_argument("--lora-alpha", type=float, default=128)
    lora.add_argument("--lora-dropout", type=float, default=0.05)
    lora.add_argument("--target-modules", default=None,
                      help="comma-separated module names (default q_proj,v_proj; for tiny: all attention and MLP projections and lm_head)")

    opt = p.add_argument_group("optimisation")
    opt.add_argument("--lr", type=float, default=2e-4)
    opt.add_argument("--weight-decay", type=float, default=0.0)
    opt.add_argument("--scheduler", default="cosine", choices=["cosine", "linear"])
    opt.add_argument("--warmup-ratio", type=float, default=0.1, help="fraction of steps spent warming up")
    opt.add_argument("--max-grad-norm", type=float, default=0.3)
    opt.add_argument("--epochs", type=float, default=3.0)
    opt.add_argument("--max-steps", type=int, default=0, help="optimizer steps (0: from --epochs)")
    opt.add_argument("--batch-size", type=int, default=4, help="examples per micro-batch")
    opt.add_argument("--grad-accum", type=int, default=4, help="micro-batches per optimizer step")
    opt.add_argument("--gradient-checkpointing", action="store_true", help="trade compute for memory (large models)")
    opt.add_argument("--dtype", default="auto", choices=["auto", "bf16", "fp32"], help="auto: bf16 where the GPU supports it")
    opt.add_argument("--device", default="auto", help="auto, cuda, cuda:1, cpu")
    opt.add_argument("--seed", type=int, default=0)
    opt.add_argument("--log-every", type=int, default=10, help="steps between training-loss log lines")

    ev = p.add_argument_group("evaluation and early stopping")
    ev.add_argument("--eval-every", type=int, default=50, help="steps between evaluations (and one at the end)")
    ev.add_argument("--eval-prompts", type=int, default=8, help="validation prompts sampled per evaluation")
    ev.add_argument("--eval-max-new-tokens", type=int, default=2048)
    ev.add_argument("--eval-temperature", type=float, default=0.0, help="0: greedy")
    ev.add_argument("--eval-max-examples", type=int, default=64, help="validation examples in the validation loss")
    ev.add_argument("--ptxforge", default=None, help="ptxforge binary: the metric is the fraction `check` accepts")
    ev.add_argument("--ptxas", action="store_true", help="pass --ptxas to `ptxforge check`: ptxas must accept too")
    ev.add_argument("--metric", default="auto", choices=["auto", "check", "loss"],
                    help="early-stopping metric (auto: check with --ptxforge, else validation loss)")
    ev.add_argument("--patience", type=int, default=3, help="evaluations without improvement before stopping")

    tiny = p.add_argument_group("the tiny model (--base-model tiny:)")
    tiny.add_argument("--tiny-vocab", type=int, default=1024)
    tiny.add_argument("--tiny-hidden", type=int, default=64)
    tiny.add_argument("--tiny-layers", type=int, default=2)
    tiny.add_argument("--tiny-heads", type=int, default=4)
    tiny.add_argument("--tiny-context", type=int, default=8192)
    args = p.parse_args(argv)
    if args.target_modules is None:
        args.target_modules = TINY_TARGET_MODULES if args.base_model == "tiny:" else "q_proj,v_proj"
    if args.metric == "auto":
        args.metric = "check" if args.ptxforge else "loss"
    if args.metric == "check" and not args.ptxforge:
        p.error("--metric check needs --ptxforge")
    if args.ptxforge and not os.access(args.ptxforge, os.X_OK):
        p.error(f"--ptxforge {args.ptxforge}: not an executable file")
    return args


def log(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


# ---------------------------------------------------------------------------------------------
# The tiny model


def train_tiny_tokenizer(records, vocab_size):
    """A byte-level BPE tokenizer trained on the messages' contents, as a transformers tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=TINY_SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = (m["content"] for r in records for m in r["messages"])
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")


def build_tiny_base(records, directory, args):
    """Saves a tiny random Llama-style model and its tokenizer to directory; returns directory."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = train_tiny_tokenizer(records, args.tiny_vocab)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=args.tiny_hidden,
        intermediate_size=4 * args.tiny_hidden,
        num_hidden_layers=args.tiny_layers,
        num_attention_heads=args.tiny_heads,
        num_key_value_heads=args.tiny_heads,
        max_position_embeddings=args.tiny_context,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(args.seed)
    model = LlamaForCausalLM(config)
    os.makedirs(directory, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    log("tiny_base", path=directory, vocab=len(tokenizer), params=sum(p.numel() for p in model.parameters()))
    return directory


# ---------------------------------------------------------------------------------------------
# Model and data


def linear_module_names(model):
    import torch

    return sorted({name.rsplit(".", 1)[-1] for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)})


def attach_lora(model, args):
    from peft import LoraConfig, get_peft_model

    targets = [t.strip() for t in args.target_modules.split(",") if t.strip()]
    available = linear_module_names(model)
    missing = [t for t in targets if t not in available]
    if missing:
        raise ValueError(f"--target-modules {','.join(missing)}: not in the model; its linear layers: {','.join(available)}")
    config = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
                        target_modules=targets, bias="none", task_type="CAUSAL_LM")
    if args.gradient_checkpointing:
        model.config.use_cache = False
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    return get_peft_model(model, config)


def encode_records(tokenizer, records, chat_format, max_len, what):
    examples = [chat.encode_example(tokenizer, r["messages"], chat_format, max_len) for r in records]
    kept = [e for e in examples if e is not None]
    if len(kept) < len(examples):
        print(f"train.py: {what}: {len(examples) - len(kept)} examples with no assistant tokens "
              f"within {max_len} tokens were dropped", file=sys.stderr)
    if not kept:
        raise ValueError(f"{what}: no usable examples")
    return kept


def collate(batch, pad_id, device):
    import torch

    width = max(len(ids) for ids, _ in batch)
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, (ids, lab) in enumerate(batch):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        labels[i, : len(lab)] = torch.tensor(lab)
        mask[i, : len(ids)] = 1
    return {"input_ids": input_ids.to(device), "labels": labels.to(device), "attention_mask": mask.to(device)}


def micro_batches(examples, batch_size, rng):
    """Endless shuffled micro-batches, epoch after epoch."""
    while True:
        order = list(range(len(examples)))
        rng.shuffle(order)
        for i in range(0, len(order), batch_size):
            yield [examples[j] for j in order[i : i + batch_size]]


def total_steps(n_examples, args):
    if args.max_steps > 0:
        return args.max_steps
    per_epoch = math.ceil(n_examples / (args.batch_size * args.grad_accum))
    return max(1, math.ceil(per_epoch * args.epochs))


def lr_factor(step, warmup, total, kind):
    """Linear warm-up, then cosine or linear decay to zero."""
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1 + math.cos(math.pi * progress)) if kind == "cosine" else max(0.0, 1 - progress)


# ---------------------------------------------------------------------------------------------
# Evaluation


def validation_loss(model, examples, pad_id, batch_size, device):
    import torch

    model.eval()
    total, tokens = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(examples), batch_size):
            batch = collate(examples[i : i + batch_size], pad_id, device)
            n = int((batch["labels"][:, 1:] != -100).sum())
            total += float(model(**batch).loss) * n
            tokens += n
    model.train()
    return total / max(tokens, 1)


def sample_replies(model, tokenizer, chat_format, prompts, args):
    model.eval()
    replies = [chat.generate_reply(model, tokenizer, chat_format, p, args.eval_max_new_tokens,
                                   args.eval_temperature)[0] for p in prompts]
    model.train()
    return replies


def evaluate(model, tokenizer, chat_format, valid_examples, prompts, pad_id, step, args, device):
    result = {"step": step, "valid_loss": validation_loss(model, valid_examples, pad_id, args.batch_size, device)}
    replies = sample_replies(model, tokenizer, chat_format, prompts, args) if prompts else []
    if args.ptxforge and replies:
        scores = chat.score_replies(replies, args.ptxforge, args.ptxas)
        verdicts = scores.pop("verdicts")
        result.update(scores)
        if scores["check_errors"]:
            print(f"train.py: ptxforge check gave no verdict: {scores['check_errors']}", file=sys.stderr)
    else:
        verdicts = [None] * len(replies)
    result["replies"] = [{"text": r, "verdict": v} for r, v in zip(replies, verdicts)]
    return result


def improved(result, best, metric):
    """Better than the best so far: a higher accept rate (ties: a lower validation loss), or a lower loss."""
    if best is None:
        return True
    if metric == "check":
        rate, best_rate = result.get("accept_rate", 0.0), best.get("accept_rate", 0.0)
        if rate != best_rate:
            return rate > best_rate
    return result["valid_loss"] < best["valid_loss"]


def save_adapter(model, tokenizer, chat_format, directory):
    os.makedirs(directory, exist_ok=True)
    # The LoRA weights alone: the base's embeddings are unchanged, also with lm_head as a target.
    model.save_pretrained(directory, save_embedding_layers=False)
    tokenizer.save_pretrained(directory)
    chat.save_format(directory, chat_format)


def write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
    os.replace(tmp, path)


def append_samples(path, result):
    with open(path, "a", encoding="utf-8") as f:
        for i, r in enumerate(result["replies"]):
            verdict = r["verdict"] or {}
            f.write(json.dumps({"step": result["step"], "prompt": i, "accepted": verdict.get("accepted"),
                                "reply": r["text"][:4000]}) + "\n")


# ---------------------------------------------------------------------------------------------
# Training


def prepare(args):
    """(model with LoRA, tokenizer, chat format, train examples, valid examples, eval prompts, device)."""
    import torch

    train_records = chat.load_jsonl(args.train)
    valid_records = chat.load_jsonl(args.valid)
    base = args.base_model
    if base == "tiny:":
        base = build_tiny_base(train_records, os.path.join(args.out, "base"), args)
    base = os.path.abspath(base)
    device = chat.pick_device(args.device)
    dtype = chat.pick_dtype(args.dtype, device)
    tokenizer = chat.load_tokenizer(base)
    chat_format = chat.resolve_format(tokenizer, args.chat_format)
    torch.manual_seed(args.seed)
    model = attach_lora(chat.load_base_model(base, dtype, device), args)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    log("model", base=base, device=str(device), dtype=str(dtype).replace("torch.", ""), chat_format=chat_format,
        trainable_params=trainable, total_params=sum(p.numel() for p in model.parameters()))
    train_examples = encode_records(tokenizer, train_records, chat_format, args.max_len, "train")
    valid_examples = encode_records(tokenizer, valid_records, chat_format, args.max_len, "valid")
    valid_examples = valid_examples[: args.eval_max_examples]
    prompts = [s[0] for s in (chat.split_prompt(r["messages"]) for r in valid_records) if s][: args.eval_prompts]
    return model, tokenizer, chat_format, train_examples, valid_examples, prompts, device


def train(args):
    import torch

    started = time.time()
    os.makedirs(args.out, exist_ok=True)
    random.seed(args.seed)
    model, tokenizer, chat_format, train_examples, valid_examples, prompts, device = prepare(args)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    steps = total_steps(len(train_examples), args)
    warmup = math.ceil(args.warmup_ratio * steps)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, warmup, steps, args.scheduler))
    batches = micro_batches(train_examples, args.batch_size, random.Random(args.seed))
    adapter_dir = os.path.join(args.out, "adapter")
    metrics = {"config": vars(args), "chat_format": chat_format, "train_examples": len(train_examples),
               "valid_examples": len(valid_examples), "eval_prompts": len(prompts), "total_steps": steps,
               "warmup_steps": warmup, "train": [], "evals": [], "best": None, "stopped": None}
    metrics_path = os.path.join(args.out, "metrics.json")
    samples_path = os.path.join(args.out, "samples.jsonl")
    if os.path.exists(samples_path):
        os.remove(samples_path)
    log("start", steps=steps, warmup=warmup, train_examples=len(train_examples), valid_examples=len(valid_examples))

    model.train()
    best, stale, window = None, 0, []
    for step in range(1, steps + 1):
        loss = 0.0
        for _ in range(args.grad_accum):
            out = model(**collate(next(batches), pad_id, device))
            (out.loss / args.grad_accum).backward()
            loss += out.loss.detach().item() / args.grad_accum
        grad_norm = float(torch.nn.utils.clip_grad_norm_(params, args.max_grad_norm))
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        window.append(loss)
        if step % args.log_every == 0 or step == steps:
            entry = {"step": step, "loss": sum(window) / len(window), "lr": scheduler.get_last_lr()[0],
                     "grad_norm": grad_norm, "seconds": round(time.time() - started, 2)}
            metrics["train"].append(entry)
            log("train", **entry)
            window = []
        if step % args.eval_every != 0 and step != steps:
            continue
        result = evaluate(model, tokenizer, chat_format, valid_examples, prompts, pad_id, step, args, device)
        append_samples(samples_path, result)
        result.pop("replies")
        result["improved"] = improved(result, best, args.metric)
        result["seconds"] = round(time.time() - started, 2)
        metrics["evals"].append(result)
        log("eval", **result)
        if result["improved"]:
            best, stale = result, 0
            save_adapter(model, tokenizer, chat_format, adapter_dir)
            metrics["best"] = {**result, "adapter": adapter_dir}
        else:
            stale += 1
        write_json(metrics_path, metrics)
        if stale >= args.patience:
            metrics["stopped"] = f"no improvement in {stale} evaluations (patience {args.patience})"
            break
    metrics["stopped"] = metrics["stopped"] or "reached the last step"
    metrics["seconds"] = round(time.time() - started, 2)
    write_json(metrics_path, metrics)
    log("done", stopped=metrics["stopped"], best_step=best["step"], adapter=adapter_dir, seconds=metrics["seconds"])
    return 0


def main(argv=None):
    args = parse_args(argv)
    try:
        return train(args)
    except ValueError as e:
        print(f"train.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
