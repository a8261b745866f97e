"""verl 0.7: VLA training lives in ``verl.experimental.vla`` of the v0.7.1 source tree.

The verl 0.7.1 wheel ships only the YAML configs of that module, not its code, so the generated
README tells users to install verl from a v0.7.1 checkout.
"""

from . import TargetDecl

TARGET = TargetDecl(
    framework="verl",
    version="0.7",
    title="verl",
    requirement="verl==0.7.1",
    algorithms={
        "grpo": "algorithm.adv_estimator=grpo",
        "reinforce_plus_plus": "algorithm.adv_estimator=reinforce_plus_plus "
        "(the upstream LIBERO example)",
    },
    # The PPO-style VLA path of 0.7.1 trains OpenVLA-OFT only (Pi0 models are SAC-only).
    model_families=("openvla_oft",),
    contract="gym env with reset/step/chunk_step behind EnvManager, selected by "
    "env.train.simulator_type",
)
