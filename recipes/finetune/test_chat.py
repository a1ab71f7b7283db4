#!/usr/bin/env python3
"""Tests of chat.py that need only the standard library (no torch): formatting, masking,
PTX extraction and the ptxforge check. PTXFORGE=path also tests against the real binary.

  python3 -m unittest recipes/finetune/test_chat.py   (or: python3 recipes/finetune/test_chat.py)
"""

import json
import os
import re
import stat
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import chat  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
VALID_PTX = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 p)
{
\tret;
}
"""


class CharTokenizer:
    """A character tokenizer with special tokens, shaped like the transformers calls chat.py makes."""

    def __init__(self, specials, chat_template=None, bos="<s>", eos="</s>"):
        self.specials = list(specials) + [t for t in (bos, eos) if t]
        self.vocab = {t: i for i, t in enumerate(self.specials)}
        self.chat_template = chat_template
        self.bos_token, self.eos_token = bos, eos
        self.bos_token_id = self.vocab[bos] if bos else None
        self.eos_token_id = self.vocab[eos] if eos else None
        self.pad_token_id = None
        self.pattern = re.compile("|".join(re.escape(t) for t in sorted(self.specials, key=len, reverse=True)) + "|.", re.S)

    def encode(self, text, add_special_tokens=False):
        assert not add_special_tokens
        return [self.vocab.setdefault(piece, len(self.vocab)) for piece in self.pattern.findall(text)]

    def decode(self, ids):
        inverse = {i: t for t, i in self.vocab.items()}
        return "".join(inverse[i] for i in ids)

    def get_vocab(self):
        return dict(self.vocab)

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        assert not tokenize
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


CONVERSATION = [
    {"role": "system", "content": "You write PTX."},
    {"role": "user", "content": "Write a kernel."},
    {"role": "assistant", "content": "```ptx\nret;\n```"},
    {"role": "user", "content": "Fix it."},
    {"role": "assistant", "content": "fixed"},
]


def trainable_text(tok, ids, labels):
    return tok.decode([i for i, label in zip(ids, labels) if label != -100])


class FormattingTest(unittest.TestCase):
    def test_fallback_masks_all_but_assistant_turns(self):
        tok = CharTokenizer(["<|system|>", "<|user|>", "<|assistant|>", chat.END_TAG])
        ids, labels = chat.encode_example(tok, CONVERSATION, "fallback", 10_000)
        self.assertEqual(ids[0], tok.bos_token_id)
        self.assertEqual(trainable_text(tok, ids, labels), "```ptx\nret;\n```<|end|></s>fixed<|end|></s>")
        self.assertIn("Write a kernel.", tok.decode(ids))

    def test_prompt_is_the_training_prefix(self):
        for fmt, tok in (("fallback", CharTokenizer(["<|assistant|>", chat.END_TAG])),
                         ("template", CharTokenizer(["<|im_start|>", "<|im_end|>"], chat_template="chatml"))):
            ids, labels = chat.encode_example(tok, CONVERSATION[:3], fmt, 10_000)
            prompt = chat.encode_prompt(tok, CONVERSATION[:2], fmt)
            first = next(i for i, label in enumerate(labels) if label != -100)
            self.assertEqual(ids[:first], prompt, fmt)

    def test_template_marks_content_and_turn_end(self):
        tok = CharTokenizer(["<|im_start|>", "<|im_end|>"], chat_template="chatml")
        self.assertEqual(chat.resolve_format(tok), "template")
        ids, labels = chat.encode_example(tok, CONVERSATION, "template", 10_000)
        self.assertEqual(trainable_text(tok, ids, labels), "```ptx\nret;\n```<|im_end|>\nfixed<|im_end|>\n")
        self.assertNotEqual(ids[0], tok.bos_token_id)

    def test_truncation_keeps_only_trainable_examples(self):
        tok = CharTokenizer(["<|assistant|>", chat.END_TAG])
        self.assertIsNone(chat.encode_example(tok, CONVERSATION, "fallback", 10))
        ids, labels = chat.encode_example(tok, CONVERSATION, "fallback", 60)
        self.assertEqual(len(ids), 60)
        self.assertEqual(len(labels), 60)

    def test_resolve_format(self):
        tok = CharTokenizer([])
        self.assertEqual(chat.resolve_format(tok, "auto"), "fallback")
        with self.assertRaises(ValueError):
            chat.resolve_format(tok, "template")

    def test_stop_tokens_include_turn_ends_in_vocabulary(self):
        tok = CharTokenizer(["<|im_end|>"])
        self.assertEqual(chat.stop_token_ids(tok), sorted([tok.eos_token_id, tok.vocab["<|im_end|>"]]))

    def test_clean_reply_cuts_at_end_tag(self):
        self.assertEqual(chat.clean_reply("\nabc<|end|>junk"), "abc")

    def test_split_prompt(self):
        prompt, reference = chat.split_prompt(CONVERSATION)
        self.assertEqual(prompt, CONVERSATION[:4])
        self.assertEqual(reference, "fixed")
        self.assertIsNone(chat.split_prompt([{"role": "user", "content": "x"}]))


class DataTest(unittest.TestCase):
    def test_load_jsonl_names_the_bad_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write(json.dumps({"messages": CONVERSATION}) + "\n\n")
            f.write(json.dumps({"messages": [{"role": "robot", "content": "x"}]}) + "\n")
        try:
            with self.assertRaisesRegex(ValueError, r":3: message 0"):
                chat.load_jsonl(f.name)
        finally:
            os.unlink(f.name)


class ExtractTest(unittest.TestCase):
    def test_last_kernel_block_wins(self):
        reply = "First:\n```ptx\n.entry a\n```\nBetter:\n```\n.entry b\n```\n```python\nprint(1)\n```"
        self.assertEqual(chat.extract_ptx(reply), ".entry b\n")

    def test_unclosed_block_runs_to_the_end(self):
        self.assertEqual(chat.extract_ptx("```ptx\n.visible .entry k()\n{"), ".visible .entry k()\n{\n")

    def test_ptx_block_without_kernel(self):
        self.assertEqual(chat.extract_ptx("```ptx\n.version 8.0\n```\n```ptx\nx\n```"), ".version 8.0\n")

    def test_no_fence_is_the_whole_text(self):
        self.assertEqual(chat.extract_ptx(VALID_PTX), VALID_PTX)


def write_fake_ptxforge(directory):
    """A stand-in for `ptxforge check --format json [--ptxas] FILE`: accepts a module with an .entry."""
    path = os.path.join(directory, "fake-ptxforge")
    with open(path, "w") as f:
        f.write('#!/bin/sh\nfor f; do :; done\n'
                'if grep -q "\\.entry" "$f"; then echo \'[{"errors":0,"readable":true,"ptxas":{"ok":true}}]\'; exit 0; fi\n'
                'echo \'[{"errors":1,"readable":true,"ptxas":{"ok":false}}]\'; exit 1\n')
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class CheckTest(unittest.TestCase):
    def test_score_with_a_stand_in(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = write_fake_ptxforge(tmp)
            replies = ["```ptx\n" + VALID_PTX + "```", "no kernel here", ""]
            scores = chat.score_replies(replies, fake, ptxas=True)
            self.assertAlmostEqual(scores["accept_rate"], 1 / 3)
            self.assertAlmostEqual(scores["check_rate"], 1 / 3)
            self.assertAlmostEqual(scores["ptxas_rate"], 1 / 3)
            self.assertEqual([v["accepted"] for v in scores["verdicts"]], [True, False, False])

    def test_missing_binary_is_no_verdict(self):
        verdict = chat.check_ptx("/nonexistent/ptxforge", VALID_PTX)
        self.assertFalse(verdict["accepted"])
        self.assertTrue(verdict["error"])

    @unittest.skipUnless(os.environ.get("PTXFORGE"), "set PTXFORGE to the binary to test against it")
    def test_real_ptxforge(self):
        ptxforge = os.environ["PTXFORGE"]
        with open(os.path.join(REPO, "examples", "vector_add.ptx")) as f:
            good = f.read()
        bad = good.replace("add.f32 %f3, %f1, %f2;", "add.f32 %f3, %f1, %f9;")
        scores = chat.score_replies(["```ptx\n" + good + "```", "```ptx\n" + bad + "```", "hello"], ptxforge)
        self.assertEqual([v["accepted"] for v in scores["verdicts"]], [True, False, False])
        self.assertEqual([v["rc"] for v in scores["verdicts"]], [0, 1, 1])
        self.assertEqual(scores["check_errors"], [])


if __name__ == "__main__":
    unittest.main()
