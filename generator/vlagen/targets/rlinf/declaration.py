"""The RLinf version lines as data (:data:`LINES`: what differs between 0.2 and 0.3), and the
one factory, :func:`rlinf_target`, that declares each from its entry (they share templates,
plan and checks)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...contracts import Contract
from .. import TargetDecl, WarningFilter, WeightsDtype
from ..common.config_schema import load_schema
from .checks import rlinf_checks
from .config import RlinfVersion
from .contract import RLINF_0_2_CONTRACT, RLINF_0_3_CONTRACT
from .memory import placement
from .plan import RlinfPlan, derived_batch, derived_settings, make_rlinf_plan, rounds_key
from .reference import comparison

if TYPE_CHECKING:
    from ...batch import Derived
    from ...spec import Spec
    from ..common.reference import Comparison

RLINF_ALGORITHMS = {
    "gae": "algorithm.adv_type=gae, loss_type=actor_critic (PPO; needs a value head)",
    "grpo": "algorithm.adv_type=grpo, loss_type=actor",
    "grpo_dynamic": "algorithm.adv_type=grpo_dynamic, loss_type=actor",
    "reinpp": "algorithm.adv_type=reinpp, loss_type=actor (REINFORCE++)",
}
#: What RLinf calls by other names: PPO is its ``gae`` advantage with the actor-critic loss
#: (rlinf/algorithms/advantages.py registers gae, grpo, grpo_dynamic, reinpp and raw).
RLINF_ALIASES = {"ppo": "gae", "reinforce++": "reinpp", "reinforce_plus_plus": "reinpp"}


@dataclass(frozen=True)
class RlinfLine:
    """What declares one RLinf version line beside what every line shares."""

    requirement: str  #: what the generated package's extra installs
    families: tuple[str, ...]  #: the spec model families it trains
    version: RlinfVersion  #: where the line puts what the adapter touches
    contract: Contract


#: The RLinf version lines, by the version a spec names.
LINES = {
    "0.2": RlinfLine(
        "rlinf[embodied]==0.2",
        # The generated registration adds the package's policy to 0.2's Enum at run time, so
        # every family the package builds trains, as on 0.3.
        ("openvla", "openvla_oft", "waypoint", "custom"),
        RlinfVersion(
            tag="v0.2",
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
    ),
    "0.3": RlinfLine(
        "rlinf[embodied]==0.3.0",
        # 0.3 resolves models through a registry, so any policy the package builds can
        # register; it trains π0 and π0.5 itself (its OpenPI model), by the same formulas.
        ("openvla", "openvla_oft", "waypoint", "custom", "pi0", "pi05"),
        RlinfVersion(
            tag="v0.3",
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
    ),
}

#: Why the 0.2 line takes no flow family: vlagen's choice, not RLinf's.
V0_2_FLOW = (
    "RLinf 0.2 trains π0 and π0.5 itself by 0.3's formulas, but vlagen builds the flow "
    "families' adapter for RLinf 0.3 only (its model registry and chunk-level loss are what "
    "the package's tests run): use target rlinf 0.3"
)

RLINF_TEST_WARNINGS = (
    WarningFilter(
        "ignore:`torch.jit.script` is deprecated:DeprecationWarning:torch.jit._script",
        "RLinf's rlinf/config.py applies torch.jit.script when imported",
    ),
    WarningFilter(
        "ignore:`torch.jit.script_method` is deprecated:DeprecationWarning:torch.jit._script",
        "RLinf's rlinf/config.py calls torch.compile, whose inductor imports torch.utils.mkldnn",
    ),
    WarningFilter(
        'ignore:\\s*version_base="1\\.1" selects Hydra 1\\.1 compatibility:UserWarning',
        'the config composes as train.py runs it, with RLinf\'s own version_base="1.1"',
    ),
    WarningFilter(
        "ignore:FSDP is switching to use `NO_SHARD`:UserWarning:torch.distributed.fsdp",
        "the fidelity tests run RLinf's FSDP actor in one CPU process: nothing to shard",
    ),
)


def rlinf_target(version_line: str) -> TargetDecl:
    """The declaration of the RLinf version line ``version_line``, from its :data:`LINES`
    entry (the lines share templates and checks)."""
    line = LINES[version_line]
    version, contract = line.version, line.contract
    if contract.config_snapshot != version.schema:
        raise ValueError(
            f"RLinf {version_line}: the contract names {contract.config_snapshot}, the plan "
            f"{version.schema}"
        )

    def planner(spec: Spec, index: int) -> RlinfPlan:
        return make_rlinf_plan(spec, index, version)

    def derived(spec: Spec, index: int) -> tuple[Derived, ...]:
        batch = derived_batch(spec, index, rounds_key(version))
        return batch + derived_settings(spec, index, version)

    def reference(spec: Spec, index: int, plan: RlinfPlan) -> Comparison:
        return comparison(spec, index, version, plan.config, plan.own)

    return TargetDecl(
        framework="rlinf",
        version=version_line,
        title="RLinf",
        requirement=line.requirement,
        algorithms=RLINF_ALGORITHMS,
        algorithm_aliases=RLINF_ALIASES,
        critics=("gae",),
        model_families=line.families,
        family_notes={} if "pi05" in line.families else dict.fromkeys(("pi0", "pi05"), V0_2_FLOW),
        # The package's policy core lays its inputs out per backbone; RLinf only stacks
        # and splits the batch-first tensors predict_action_batch returns (policy.py).
        backbones=("llava", "qwen2_5_vl", "qwen3_vl"),
        contract=contract,
        checks=rlinf_checks,
        templates="rlinf",
        planner=planner,
        placement=placement,
        # get_model casts the model to precision and FSDP1 wraps it as it is: AdamW steps
        # bf16 weights (mixed_precision.param_dtype sets the compute dtype only)
        weights_dtype=WeightsDtype(
            "actor.model.precision", "rlinf/models/__init__.py: get_model", "fp32"
        ),
        config_keys=lambda: load_schema(version.schema)["keys"],
        derived=derived,
        reference=reference,
        # What the modules the verification tests import from RLinf (installed --no-deps)
        # import in turn; regex comes with transformers, which a custom family lacks.
        test_requirements=(
            "omegaconf",
            "hydra-core",
            "ray",
            "gymnasium",
            "imageio",
            "regex",
            # the actor worker imports transformers and accelerate at module level, whatever
            # the model family (found by a fresh venv of the custom-family golden)
            "transformers",
            "accelerate",
        ),
        test_warnings=RLINF_TEST_WARNINGS,
        # rlinf/envs/libero/libero_env.py imports gym (its embodied extra asks for it
        # unpinned; 0.26.2 is gym's last release); the LIBERO tests compare our observations
        # with that env's
        preset_test_installs={"libero": ("gym==0.26.2",)},
    )
