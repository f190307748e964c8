"""verl's trainer config (its own Hydra `ppo_trainer.yaml`, or with `--config sft_trainer_engine` its SFT trainer's)
composed with the overrides alight maps its settings onto (src/train/verl-config.ts, verl-sft.ts).
`python -m alight_worker.verl.config [--config NAME] KEY=VALUE ...` prints the composed config as YAML: what
`alight train --backend verl --dry-run` and `alight sft --backend verl --dry-run` show."""

import os
import sys


def compose(overrides, config_name="ppo_trainer"):
    """The composed, resolved-on-read OmegaConf config; Hydra refuses a key verl does not have."""
    import verl
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return hydra_compose(config_name=config_name, overrides=list(overrides))


if __name__ == "__main__":
    from omegaconf import OmegaConf

    args = sys.argv[1:]
    name = "ppo_trainer"
    if args[:1] == ["--config"]:
        name, args = args[1], args[2:]
    print(OmegaConf.to_yaml(compose(args, name)))
