"""TRL's real ``GRPOTrainer`` for the ``trl`` tests: a tiny model and tokenizer made here.

No weights and no hub exist on this machine, so nothing is downloaded: the tokenizer is
built with ``tokenizers`` (one token per printable character), the model is a one-layer
Llama initialised at random from a config, and ``HF_HUB_OFFLINE=1`` makes any attempt to
reach the hub fail at once. ``scripts/trl`` installs torch (CPU) and TRL; the tests are
deselected from the main suite (``-m "not local_model and not trl"`` in pyproject.toml):
``VENV=~/.cache/gradeloop-trl/venv scripts/test -q -n 0 -m trl tests/grpo``.

The model's completions are noise; the tests check the contract between TRL and
gradeloop's reward functions (what arrives, what is returned, what TRL logs), never a
learning curve.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers reads it, at its import
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path
from typing import Any

import pytest

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def tiny_tokenizer() -> Any:
    """A character-level tokenizer built in memory: pad, end and start tokens, then one
    token per printable ASCII character."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    symbols = ["<pad>", "<eos>", "<bos>"] + [chr(c) for c in range(32, 127)]
    core = Tokenizer(models.WordLevel(vocab={s: i for i, s in enumerate(symbols)}, unk_token=" "))
    core.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    core.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", bos_token="<bos>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_model(vocab_size: int) -> Any:
    """A one-layer Llama with random weights (seeded)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=128,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=2,
    )
    return LlamaForCausalLM(config)


def train(reward_funcs: Any, rows: list[dict[str, Any]], out: Path, steps: int = 2) -> Any:
    """``steps`` steps of GRPO on ``rows`` (2 completions a prompt, 4 a step); the trainer."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = tiny_tokenizer()
    args = GRPOConfig(
        output_dir=str(out),
        max_steps=steps,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=8,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        bf16=False,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=tiny_model(len(tokenizer)),
        reward_funcs=reward_funcs,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
    )
    trainer.train()
    return trainer


@pytest.fixture
def trained(tmp_path: Path) -> Any:
    """``train`` with the run's files in a temporary folder."""
    return lambda funcs, rows, steps=2: train(funcs, rows, tmp_path / "out", steps)
