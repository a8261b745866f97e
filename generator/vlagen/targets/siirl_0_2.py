"""siiRL 0.2: the first siiRL release with embodied (VLA) training in its wheel."""

from . import TargetDecl

TARGET = TargetDecl(
    framework="siirl",
    version="0.2",
    title="siiRL",
    requirement="siirl==0.2.0",
    algorithms={
        "grpo": "algorithm.adv_estimator=grpo (GRPO pipeline)",
        "gae": "algorithm.adv_estimator=gae (PPO pipeline with a critic)",
        "dapo": "algorithm.workflow_type=dapo (DAPO pipeline)",
        "srpo": "algorithm.workflow_type=embodied, adv_estimator=grpo (embodied SRPO pipeline)",
    },
    # actor_rollout_ref.embodied.embodied_type accepts only "openvla" and "openvla-oft".
    model_families=("openvla", "openvla_oft"),
    contract="BaseVLAEnvironment (async reset/step); the rollout calls "
    "_blocking_reset/_blocking_step",
)
