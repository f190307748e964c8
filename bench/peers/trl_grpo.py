"""The GRPO peer: TRL's GRPOTrainer on the arithmetic example, set up as alight trains it (issue 34).

Same as alight's examples/arithmetic: the chat (system 'Solve the problem. End your reply with the final answer.',
user = the task's question, the model's own chat template with the generation prompt), max 48 completion tokens,
temperature 1 (top_p 1, no top_k), the reward (the last number in the reply, /-?\\d+(?:\\.\\d+)?/, else the whole
reply, scored by reasoning-gym's compute_decimal_reward against the task's answer), group-normalised advantages ((R -
mean) / (unbiased std + eps)), each sequence's token-mean loss averaged over the step's sequences (alight's default
lossNorm per-rollout-mean, TRL's loss_type "grpo"), AdamW (betas 0.9/0.999, weight decay 0) at a constant learning
rate, grad-norm clip 1.0, PPO clip 0.2 / 0.28, one PPO epoch, no KL (beta 0), fp32 on CPU, and the task order: step s
trains on positions s*B .. s*B+B-1 of the train split shuffled with alight's own permutation (src/algo/schedule.ts,
ported below), so both trainers see the same tasks in the same order for the same seed.

Run with the venv from setup-trl.sh:
    ~/.cache/alight/trl/bin/python bench/peers/trl_grpo.py --model /path/to/hf-folder --out /tmp/trl-run
"""

import argparse
import json
import os
import re
import shutil
import sys
import time

import trl_tools

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
SYSTEM = "Solve the problem. End your reply with the final answer."
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TRAIN = os.path.join(HERE, "..", "..", "examples", "arithmetic", "train.jsonl")
M32 = 0xFFFFFFFF


def permutation(n: int, seed: int) -> list[int]:
    """alight's permutation (src/algo/schedule.ts): Fisher-Yates driven by mulberry32, in uint32 arithmetic."""
    state = seed & M32

    def random() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & M32
        t = state
        t = ((t ^ (t >> 15)) * (t | 1)) & M32
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & M32)) & M32
        return ((t ^ (t >> 14)) & M32) / 4294967296

    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(random() * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


def tasks_for_step(tasks: list, batch: int, step: int, seed: int) -> list:
    """alight's tasksForStep: a fresh seeded shuffle each epoch; step s takes positions s*B .. s*B+B-1."""
    out, epoch, order = [], -1, []
    for p in range(step * batch, (step + 1) * batch):
        e = p // len(tasks)
        if e != epoch:
            epoch, order = e, permutation(len(tasks), seed * 1_000_003 + e)
        out.append(tasks[order[p % len(tasks)]])
    return out


def final_answer(reply: str) -> str:
    """The harness's extraction (examples/arithmetic/verifier.mjs): the last number in the reply, else the reply."""
    found = NUMBER.findall(reply)
    return found[-1] if found else reply


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="Hugging Face model folder (e.g. the converted SmolLM2-135M)")
    ap.add_argument("--out", required=True, help="output folder: step-N checkpoints and trl-result.json")
    ap.add_argument("--task", choices=["arithmetic", "calculator"], default="arithmetic", help="the example trained")
    ap.add_argument("--train", help="train split (jsonl with id, question, answer; default: the example's)")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-tasks", type=int, default=8, help="prompts per step")
    ap.add_argument("--group", type=int, default=8, help="completions per prompt (num_generations)")
    ap.add_argument("--max-tokens", type=int, default=48, help="max_completion_length")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--top-p", type=float, default=1.0)
    ap.add_argument("--micro-batch", type=int, default=16, help="completions per forward/backward (grad accumulation)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--objective", choices=["grpo", "drgrpo"], default="grpo", help="see the GRPOConfig below")
    ap.add_argument(
        "--mask-truncated", action="store_true", help="leave completions cut at --max-tokens out of the loss"
    )
    ap.add_argument("--save-every", type=int, default=0, help="save --out/step-N every N steps (0: only the last)")
    args = ap.parse_args()
    agent = args.task == "calculator"
    args.train = args.train or (trl_tools.DEFAULT_TRAIN if agent else DEFAULT_TRAIN)
    system = trl_tools.SYSTEM if agent else SYSTEM

    # Before torch is imported, so that no library starts more threads than asked (and TRL's vLLM path stays off).
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(args.threads))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

    t_start = time.perf_counter()
    import torch
    import trl
    from datasets import Dataset
    from reasoning_gym.utils import compute_decimal_reward
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(args.threads)
    completions_per_step = args.batch_tasks * args.group
    if completions_per_step % args.micro_batch:
        sys.exit(f"--micro-batch {args.micro_batch} must divide batch-tasks x group = {completions_per_step}")
    accumulation = completions_per_step // args.micro_batch

    with open(args.train) as f:
        tasks = [json.loads(line) for line in f if line.strip()]
    # The dataset is the steps' tasks in training order; TRL's own shuffle is off, so its sampler reads it in order.
    rows = []
    for s in range(args.steps):
        for t in tasks_for_step(tasks, args.batch_tasks, s, args.seed):
            prompt = [{"role": "system", "content": system}, {"role": "user", "content": t["question"]}]
            rows.append({"prompt": prompt, "answer": str(t["answer"]), "task_id": t["id"]})
    dataset = Dataset.from_list(rows)

    def reply(completion) -> str:
        if agent:
            return trl_tools.final_reply(completion)
        return completion[0]["content"] if isinstance(completion, list) else completion

    def reward(completions, answer, **_):
        return [float(compute_decimal_reward(final_answer(reply(c)), oracle)) for c, oracle in zip(completions, answer)]

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    tools = None
    if agent:
        import trl.trainer.grpo_trainer as grpo_trainer

        trl_tools.prepare_tokenizer(tokenizer, grpo_trainer)
        tools = [trl_tools.tool_function(trl_tools.Calculator())]

    config = GRPOConfig(
        output_dir=args.out,
        seed=args.seed,
        data_seed=args.seed,
        use_cpu=True,
        bf16=False,
        fp16=False,
        use_vllm=False,
        max_steps=args.steps,
        num_train_epochs=1,
        learning_rate=args.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        optim="adamw_torch",
        adam_beta1=0.9,
        adam_beta2=0.999,
        weight_decay=0.0,
        max_grad_norm=1.0,
        per_device_train_batch_size=args.micro_batch,
        gradient_accumulation_steps=accumulation,
        steps_per_generation=accumulation,  # one generation of batch-tasks x group completions per optimizer step
        num_generations=args.group,
        num_iterations=1,
        max_completion_length=args.max_tokens,
        max_tool_calling_iterations=trl_tools.MAX_TOOL_ITERATIONS if agent else None,
        temperature=args.temperature,
        top_p=args.top_p,
        top_k=0,
        beta=0.0,
        epsilon=0.2,
        epsilon_high=0.28,  # alight's clipLow / clipHigh defaults
        # alight's --advantage grpo --loss-norm per-rollout-mean, or --advantage drgrpo --loss-norm constant
        # (maxResponseTokens = max_completion_length): the same objectives under TRL's names.
        loss_type="grpo" if args.objective == "grpo" else "dr_grpo",
        scale_rewards="group" if args.objective == "grpo" else "none",
        # alight's train.batch.dropOverlong: advantages still count the cut completions, the loss does not.
        mask_truncated_completions=args.mask_truncated,
        shuffle_dataset=False,
        disable_dropout=True,
        logging_steps=1,
        logging_strategy="steps",
        save_strategy="no",
        report_to="none",
        dataloader_num_workers=0,
        disable_tqdm=True,
    )

    timings = {"generate_s": 0.0, "generate_and_score_s": 0.0, "save_s": 0.0, "completion_tokens": 0}
    per_step = []

    class Trainer(GRPOTrainer):
        def _generate(self, prompts):
            t0 = time.perf_counter()
            try:
                return super()._generate(prompts)
            finally:
                timings["generate_s"] += time.perf_counter() - t0

        def _generate_and_score_completions(self, inputs):
            t0 = time.perf_counter()
            try:
                out = super()._generate_and_score_completions(inputs)
                timings["completion_tokens"] += int(out["completion_mask"].sum().item())
                return out
            finally:
                timings["generate_and_score_s"] += time.perf_counter() - t0

    def save(trainer, step):
        t0 = time.perf_counter()
        path = os.path.join(args.out, f"step-{step}")
        # TRL turns the KV cache off for training; the checkpoint keeps the source folder's config (use_cache true).
        config, use_cache = trainer.model.config, trainer.model.config.use_cache
        config.use_cache = True
        trainer.model.save_pretrained(path, safe_serialization=True)
        config.use_cache = use_cache
        tokenizer.save_pretrained(path)
        # The source folder's template file as it is (the evaluation's server renders the harness's turns with it).
        template = os.path.join(args.model, "chat_template.jinja")
        if os.path.exists(template):
            shutil.copyfile(template, os.path.join(path, "chat_template.jinja"))
        timings["save_s"] += time.perf_counter() - t0
        return path

    class Progress(TrainerCallback):
        # The step's clock starts here; TRL logs a step after on_step_end, so a checkpoint saved there falls inside
        # the step's wall time and is taken out of `update_s`. cpu_s is this process's CPU time (all threads).
        def on_step_begin(self, _args, state, control, **kw):
            self.at = dict(timings, wall=time.perf_counter(), cpu=time.process_time())

        def on_log(self, _args, state, control, logs=None, **kw):
            if not logs or "reward" not in logs:
                return
            gen = timings["generate_s"] - self.at["generate_s"]
            gen_score = timings["generate_and_score_s"] - self.at["generate_and_score_s"]
            saved = timings["save_s"] - self.at["save_s"]
            wall = time.perf_counter() - self.at["wall"]
            update = wall - gen_score - saved
            rec = {
                "step": state.global_step,
                "reward_mean": logs["reward"],
                "reward_std": logs.get("reward_std"),
                "frac_reward_zero_std": logs.get("frac_reward_zero_std"),
                "completion_tokens": timings["completion_tokens"] - self.at["completion_tokens"],
                "mean_completion_length": logs.get("completions/mean_length"),
                "clipped_ratio": logs.get("completions/clipped_ratio"),
                "tool_call_frequency": logs.get("tools/call_frequency"),
                "tool_failure_frequency": logs.get("tools/failure_frequency"),
                "grad_norm": logs.get("grad_norm"),
                "loss": logs.get("loss"),
                "wall_s": wall,
                "cpu_s": time.process_time() - self.at["cpu"],
                "generate_s": gen,
                "score_and_logprobs_s": gen_score - gen,
                "update_s": update,
                "save_s": saved,
            }
            per_step.append(rec)
            print(
                f"[trl] step {rec['step']}/{args.steps} reward {rec['reward_mean']:.3f} "
                f"len {rec['mean_completion_length'] or 0:.1f} tok {rec['completion_tokens']} "
                f"{wall:.1f}s (generate {gen:.1f}s, score {gen_score - gen:.1f}s, update {update:.1f}s"
                f"{f', save {saved:.1f}s' if saved else ''}; cpu {rec['cpu_s']:.0f}s)",
                flush=True,
            )

        def on_step_end(self, _args, state, control, **kw):
            if args.save_every and state.global_step % args.save_every == 0:
                print(f"[trl] saved {save(trainer, state.global_step)}", flush=True)

    trainer = Trainer(
        model=model,
        reward_funcs=reward,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[Progress()],
        tools=tools,
    )
    print(
        f"[trl] trl {trl.__version__}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"{args.steps} steps x {args.batch_tasks} tasks x {args.group} completions, "
        f"micro-batch {args.micro_batch} x {accumulation}, lr {args.lr}, seed {args.seed}",
        flush=True,
    )
    t_train = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - t_train
    if not args.save_every or args.steps % args.save_every:
        print(f"[trl] saved {save(trainer, args.steps)}", flush=True)

    result = {
        "peer": "trl",
        "trl_version": trl.__version__,
        "torch_version": torch.__version__,
        "transformers_version": __import__("transformers").__version__,
        "model": os.path.abspath(args.model),
        "train": os.path.abspath(args.train),
        "task": args.task,
        "seed": args.seed,
        "steps": len(per_step),
        "lr": args.lr,
        "batch_tasks": args.batch_tasks,
        "group": args.group,
        "micro_batch": args.micro_batch,
        "max_completion_length": args.max_tokens,
        "temperature": args.temperature,
        "torch_threads": torch.get_num_threads(),
        "completions_sampled": len(per_step) * completions_per_step,
        "completion_tokens": timings["completion_tokens"],
        "wall_s": time.perf_counter() - t_start,
        "train_wall_s": train_s,
        "generate_s": timings["generate_s"],
        "score_and_logprobs_s": timings["generate_and_score_s"] - timings["generate_s"],
        "update_s": sum(r["update_s"] for r in per_step),
        "save_s": timings["save_s"],
        "cpu_s": time.process_time(),
        "train_reward_mean": [r["reward_mean"] for r in per_step],
        "per_step": per_step,
        "task_ids": [r["task_id"] for r in rows],
    }
    with open(os.path.join(args.out, "trl-result.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(
        f"[trl] done: {result['steps']} steps in {train_s:.1f}s training ({result['wall_s']:.1f}s total), "
        f"wrote {os.path.join(args.out, 'trl-result.json')}",
        flush=True,
    )


if __name__ == "__main__":
    main()
