"""verl's trainer config (its own Hydra `ppo_trainer.yaml`) composed with the overrides alight maps its settings onto
(src/train/verl-config.ts). `python -m alight_worker.verl_config KEY=VALUE ...` prints the composed config as YAML:
what `alight train --backend verl --dry-run` shows."""

import os
import sys


def compose(overrides):
    """The composed, resolved-on-read OmegaConf config; Hydra refuses a key verl does not have."""
    import verl
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=list(overrides))


if __name__ == "__main__":
    from omegaconf import OmegaConf

    print(OmegaConf.to_yaml(compose(sys.argv[1:])))
