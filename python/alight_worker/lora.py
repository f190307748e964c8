"""LoRA on the torch worker, through PEFT: the base weights stay frozen and only the adapter's low-rank matrices train,
so the optimizer's state is the adapter's and a checkpoint is the adapter alone (adapter_model.safetensors and
adapter_config.json, the files vLLM and PEFT load). Rank 0 is full fine-tuning and leaves the model as it was.

    python -m alight_worker.lora merge --adapter ADAPTER --out FOLDER [--base MODEL]   (alight models merge)

writes base + adapter as one Hugging Face folder, for engines that serve full weights."""

import argparse
import json
import os
import sys

# Input embeddings are not adapted (an adapter that carried whole modules, modules_to_save, could not be hot-swapped
# as an adapter either). The output layer is, when named: the worker serves it exactly; vLLM does not (it drops an
# lm_head delta from its prompt logprobs, vLLM #51594), so the orchestrator refuses it there (commands/train.ts).
REFUSED_TARGETS = {"embed_tokens", "wte", "word_embeddings"}
OUTPUT_LAYER = "lm_head"


def wrap(model, settings):
    """The model with a trainable adapter: a fresh one (B = 0, so the policy starts as the base model) or, with
    `from`, the saved adapter to continue. Raises ValueError on settings that cannot work."""
    from peft import LoraConfig, PeftModel, get_peft_model

    if settings["from"]:
        saved = read_adapter_config(settings["from"])
        if settings["rank"] and saved.get("r") != settings["rank"]:
            raise ValueError(
                f"the adapter in {settings['from']} has rank {saved.get('r')}, not {settings['rank']}: "
                "leave the rank out to continue it as it is"
            )
        if saved.get("modules_to_save"):
            raise ValueError(f"the adapter in {settings['from']} saves whole modules ({saved['modules_to_save']})")
        model = PeftModel.from_pretrained(model, settings["from"], is_trainable=True)
    else:
        refused = REFUSED_TARGETS & set(settings["targets"])
        if refused:
            raise ValueError(f"LoRA on {', '.join(sorted(refused))} is not supported: target the linear layers")
        config = LoraConfig(
            r=settings["rank"],
            lora_alpha=settings["alpha"],
            lora_dropout=settings["dropout"],
            target_modules=module_names(model, settings["targets"]),
            bias="none",
            task_type="CAUSAL_LM",
        )
        model = get_peft_model(model, config)  # PEFT raises a ValueError naming targets the model lacks
    return model


def module_names(model, targets):
    """PEFT's target_modules for `targets`: "all-linear" alone is PEFT's own (every linear layer but the output);
    beside other names it is spelled out, so that "all-linear,lm_head" adapts the output layer too."""
    import torch

    if targets == ["all-linear"]:
        return "all-linear"
    names = set(targets) - {"all-linear"}
    if "all-linear" in targets:
        output = model.get_output_embeddings()
        linear = (n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and m is not output)
        names |= {n.rsplit(".", 1)[-1] for n in linear}
    return sorted(names)


def read_adapter_config(path):
    file = os.path.join(path, "adapter_config.json")
    if not os.path.exists(file):
        raise ValueError(f"{path} holds no LoRA adapter (adapter_config.json)")
    with open(file) as f:
        return json.load(f)


def save_adapter(model, path):
    """The adapter alone (adapter_model.safetensors, adapter_config.json). Not the output layer's weights, which PEFT
    would add when the adapter targets it: they are the base's, frozen, and would make the adapter a model's size."""
    model.save_pretrained(path, safe_serialization=True, save_embedding_layers=False)


def load_adapter(model, path):
    """The adapter weights saved in `path` into the wrapped model, in place (a checkpoint resumed)."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    state = load_file(os.path.join(path, "adapter_model.safetensors"))
    unexpected = set_peft_model_state_dict(model, state).unexpected_keys
    if unexpected:
        raise ValueError(f"the adapter in {path} does not fit this model: {unexpected[:3]}")


def merge(adapter, out, base=None):
    """base + adapter as one full model folder (PEFT's merge: W + (α/r)·B·A for every adapted layer). The base is the
    model the adapter was trained on (its adapter_config.json says where) unless given."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    config = read_adapter_config(adapter)
    base = base or config.get("base_model_name_or_path")
    if not base or not os.path.exists(os.path.join(base, "config.json")):
        raise ValueError(f"the adapter's base model {base!r} is not a model folder here: pass --base")
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    if OUTPUT_LAYER in str(config.get("target_modules")) and model.config.tie_word_embeddings:
        untie(model)
    adapted = PeftModel.from_pretrained(model, adapter)
    layers = sum(1 for m in adapted.modules() if hasattr(m, "lora_A"))
    merged = adapted.merge_and_unload()
    merged.save_pretrained(out, safe_serialization=True)
    merged.generation_config.save_pretrained(out)
    AutoTokenizer.from_pretrained(base).save_pretrained(out)
    return {"path": out, "base": base, "rank": config.get("r"), "layers": layers}


def untie(model):
    """The output layer as its own copy of the embeddings: merging an adapter into a tied output layer would change
    the input embeddings with it."""
    import torch

    output = model.get_output_embeddings()
    output.weight = torch.nn.Parameter(output.weight.detach().clone())
    model.config.tie_word_embeddings = False


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m alight_worker.lora")
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("merge", help="base + adapter as one Hugging Face folder")
    m.add_argument("--adapter", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--base", help="the base model folder (default: the one the adapter names)")
    args = parser.parse_args(argv)
    try:
        print(json.dumps(merge(args.adapter, args.out, args.base)))
    except ValueError as err:
        print(err, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
