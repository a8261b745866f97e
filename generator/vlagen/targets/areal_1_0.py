"""AReaL 1.0: no env or VLA classes; the adapter runs episodes inside a ``RolloutWorkflow``."""

from . import TargetDecl

TARGET = TargetDecl(
    framework="areal",
    version="1.0",
    title="AReaL",
    requirement="areal==1.0.4",
    algorithms={
        "ppo": "PPOConfig with a critic",
        "grpo": "GRPOConfig (group-relative advantages, no critic)",
    },
    model_families=("openvla", "openvla_oft", "waypoint", "custom"),
    contract="RolloutWorkflow.arun_episode(engine, data) (async)",
    backbones=("llava", "qwen2_5_vl", "qwen3_vl"),
)
