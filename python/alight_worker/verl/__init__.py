"""The verl backend: verl's own RL workers (FSDP actor, vLLM servers, Ray) training on alight's batch with alight's
loss (backend.py), and what it needs around them: the batch as verl's DataProto (batch.py), the loss registered with
verl (loss.py), its config composed from alight's settings (config.py), what each Ray worker sets up first
(worker_setup.py), verl's CPU platform (cpu.py) and alight's rows as verl's SFT dataset (sft_data.py)."""
