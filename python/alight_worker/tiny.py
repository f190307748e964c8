"""A tiny causal LM with a character tokenizer and a ChatML template, randomly initialised: small enough to learn a
toy task by RL on a CPU in minutes, real enough to go through transformers, a tokenizer.json and a chat template, and
shaped so that vLLM's CPU build serves it too (head size 32: its CPU attention takes 32, 64, 80, …, not 16).

    python -m alight_worker.tiny --out models/tiny --seed 0
"""

import argparse
import json
import os

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<unk>"]
# The JSON and markup characters come last, so earlier ids stay put: with them a tiny model can spell a hermes tool call
# (<tool_call>{"name": …}</tool_call>) when a grammar guides it.
CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;!?'\"()-\n<>/{}[]_=+*#"
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def make_tokenizer():
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    vocab = {s: i for i, s in enumerate(SPECIALS)}
    for c in CHARS:
        vocab[c] = len(vocab)
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    core.add_special_tokens(SPECIALS)
    core.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token="<unk>",
        chat_template=CHAT_TEMPLATE,
    )


def make(out, seed=0, hidden=64, layers=2, heads=2):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    tokenizer = make_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 4,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=1024,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    # Padding, the turn opener and the unknown token are never answers; sampling them would only break the history.
    model.generation_config.suppress_tokens = [
        tokenizer.convert_tokens_to_ids(t) for t in ["<|endoftext|>", "<|im_start|>", "<unk>"]
    ]
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=2, help="attention heads (head size = hidden / heads)")
    args = parser.parse_args()
    print(json.dumps({"path": make(args.out, args.seed, args.hidden, args.layers, args.heads)}))
