"""RLinf 0.2: models are a closed Enum (``SupportedModel``) with an if/elif ``get_model``;
sampling and rollout-epoch keys still live under ``algorithm``."""

from ._rlinf import RLINF_0_2_CONTRACT, RlinfVersion, rlinf_target

TARGET = rlinf_target(
    "0.2",
    "rlinf[embodied]==0.2",
    # The generated registration adds the package's policy to 0.2's Enum at run time, so
    # every family the package builds trains, as on 0.3.
    ("openvla", "openvla_oft", "waypoint", "custom"),
    RlinfVersion(
        schema="rlinf_0_2",
        model_registry="enum",
        io_struct="rlinf.data.embodied_io_struct",
        sampling_params_under="algorithm",
        rollout_epoch_under_env=False,
        weight_syncer=False,
        prepare_actions_passes_unknown=False,
        fidelity_harness=False,
        ext_loader_in_worker=True,
    ),
    RLINF_0_2_CONTRACT,
)
