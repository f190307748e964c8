"""A GGUF model as a Hugging Face folder (float32 safetensors, tokenizer, chat template, stop tokens) that the torch
worker trains and vLLM serves, and the measure of how closely the folder follows llama.cpp on the GGUF.

    python -m alight_worker.convert_gguf convert --gguf model.gguf --out DIR     # prints the prompts to check
    python -m alight_worker.convert_gguf agree --out DIR --reference ref.json    # prints the agreement

Both print one JSON object on stdout and progress lines on stderr. `alight models convert` runs them in turn, with
llama.cpp's greedy continuations of the prompts (node-llama-cpp) in between.
"""

import argparse
import json
import os
import sys
import time

# The checked prompts: a few short ones, so that the check stays within seconds on a CPU.
CHAT_PROMPTS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "What is 17 + 25? Answer with the number.",
    "Give three tips for writing clear code.",
]
TEXT_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea,",
    "def fibonacci(n):\n",
    "The three primary colours are",
]
# The names llama.cpp's own end-of-generation list carries: a turn ends on them whatever the model's eos is, so that the
# folder stops where `alight serve` stops on the GGUF.
END_OF_TURN = ["<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|eom_id|>", "<|end|>", "<|endoftext|>"]


def say(line):
    """A progress line: alight shows these and keeps the rest of stderr (warnings, a traceback) for its error."""
    print(f"progress: {line}", file=sys.stderr, flush=True)


def stop_ids(tokenizer):
    """The eos token and every end-of-turn token of the vocabulary, eos first."""
    ids = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    vocab = tokenizer.get_vocab()
    return ids + [vocab[t] for t in END_OF_TURN if t in vocab and vocab[t] not in ids]


def dequantised(model):
    """The loaded model is float32 already, but still flagged as GGUF-quantised: save_pretrained refuses such a model,
    and the flag in config.json would make every later load look for a GGUF file."""
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    return model


def prompts(tokenizer):
    """The checked prompts as text: through the chat template where the model has one, else plain beginnings."""
    if not tokenizer.chat_template:
        return [{"text": t, "chat": False} for t in TEXT_PROMPTS]
    return [
        {
            "text": tokenizer.apply_chat_template(
                [{"role": "user", "content": q}], tokenize=False, add_generation_prompt=True
            ),
            "chat": True,
        }
        for q in CHAT_PROMPTS
    ]


def metadata(gguf, *keys):
    """Fields of the GGUF's metadata (None where absent)."""
    from gguf import GGUFReader

    fields = GGUFReader(gguf).fields
    return [fields[k].contents() if k in fields else None for k in keys]


def convert(gguf, out):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = os.path.split(os.path.abspath(gguf))
    started = time.monotonic()
    say("reading the tokenizer")
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    licence, add_bos = metadata(gguf, "general.license", "tokenizer.ggml.add_bos_token")
    if add_bos is not None:
        # Whether a text starts with the BOS token, which llama.cpp follows: transformers' reader drops it for some
        # tokenizers (Gemma's), and Gemma without its BOS token is a much worse model.
        tokenizer.add_bos_token = add_bos
    say("dequantising the weights to float32")
    model = dequantised(AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32))
    stops = stop_ids(tokenizer)
    model.generation_config.eos_token_id = stops
    if model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    say(f"writing {out}")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return {
        "architecture": model.config.model_type,
        "licence": licence,
        "parameters": sum(p.numel() for p in model.parameters()),
        "chat_template": bool(tokenizer.chat_template),
        "eos_token_ids": stops,
        "eos_tokens": tokenizer.convert_ids_to_tokens(stops),
        "prompts": prompts(tokenizer),
        "seconds": round(time.monotonic() - started, 1),
    }


def agree(out, reference):
    """Reloads the written folder as the torch worker does and teacher-forces llama.cpp's continuations through it:
    the share of positions where its argmax is llama.cpp's greedy token, and whether it tokenises each prompt as
    llama.cpp did."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    say("checking the folder against llama.cpp's greedy continuations")
    tokenizer = AutoTokenizer.from_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32).eval()
    results = []
    for r in reference:
        ids = tokenizer(r["text"], add_special_tokens=not r["chat"]).input_ids
        prompt, continuation = r["prompt_ids"], r["continuation_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([prompt + continuation])).logits[0]
        predicted = logits[len(prompt) - 1 : -1].argmax(-1).tolist()
        matches = sum(p == c for p, c in zip(predicted, continuation))
        results.append({"same_prompt_ids": ids == prompt, "matches": matches, "positions": len(continuation)})
    positions = sum(r["positions"] for r in results)
    return {
        "agreement": round(sum(r["matches"] for r in results) / positions, 4) if positions else None,
        "same_prompt_ids": all(r["same_prompt_ids"] for r in results),
        "prompts": results,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m alight_worker.convert_gguf")
    steps = parser.add_subparsers(dest="step", required=True)
    c = steps.add_parser("convert")
    c.add_argument("--gguf", required=True)
    c.add_argument("--out", required=True)
    a = steps.add_parser("agree")
    a.add_argument("--out", required=True)
    a.add_argument("--reference", required=True, help="JSON: [{text, chat, prompt_ids, continuation_ids}]")
    args = parser.parse_args(argv)
    # Our own progress lines say what is happening; the bars of transformers and of its GGUF reader (tqdm) would flood
    # a log with carriage returns.
    os.environ.setdefault("TQDM_DISABLE", "1")
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()
    if args.step == "convert":
        result = convert(args.gguf, args.out)
    else:
        with open(args.reference) as f:
            result = agree(args.out, json.load(f))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
