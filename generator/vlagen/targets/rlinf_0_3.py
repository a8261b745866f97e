"""RLinf 0.3: models register through ``register_model``; envs are duck-typed gym envs."""

from ._rlinf import RLINF_0_3_CONTRACT, RlinfVersion, rlinf_target

TARGET = rlinf_target(
    "0.3",
    "rlinf[embodied]==0.3.0",
    # 0.3 resolves models through a registry, so any policy the package builds can register.
    ("openvla", "openvla_oft", "waypoint", "custom"),
    RlinfVersion(
        schema="rlinf_0_3",
        model_registry="register_model",
        io_struct="rlinf.data.embodied_io_struct",
        sampling_params_under="rollout",
        rollout_epoch_under_env=True,
        weight_syncer=True,
        prepare_actions_passes_unknown=True,
        fidelity_harness=True,
        ext_loader_in_worker=False,
    ),
    RLINF_0_3_CONTRACT,
)
