"""The learning run fails when training is broken: each mutation (a flipped advantage sign,
a loss that reads each token's logits one place off, a frozen adapter, rewards that have
nothing to do with the actions, steps too small to move the policy) makes
``python -m <pkg>.learn`` exit 1, and the unmutated run, side by side, passes.

bfloat16's rounding itself is ``vlagen``'s check (``tests/test_updates.py``): at the tiny
model's size no rate both trains it in float32 and is rounded away in bfloat16, since its
LoRA B matrices start at zero, where every step is representable.

The mutations are keyed by framework, each run on its golden (:data:`GOLDEN`). RLinf 0.3's
own loop runs the LIBERO example's (OpenVLA-OFT with LoRA r32 in bfloat16, GRPO), under
every mutation; verl 0.7.1's ``RobRayPPOTrainer.fit`` runs the PushT example's (OpenVLA-OFT,
bfloat16, GRPO), AReaL 1.0's ``PPOTrainer.train`` the portable highway example's
(Qwen2.5-VL in bfloat16, GRPO) and siiRL 0.2's ``DAGWorker.execute_task_graph`` the highway
OpenVLA example's (GRPO), each with its advantage's sign flipped. Each mutation is put
in place by a bootstrap script in the run's own process, then the package's ``learn.main``
runs as the command does.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import GOLDENS

RLINF_GOLDEN = "libero_openvla_oft"  #: the golden, and its package, RLinf's mutations run on
VERL_GOLDEN = "pusht_openvla_oft"  #: the golden, and its package, verl's mutations run on
AREAL_GOLDEN = "highway_qwen_portable"  #: the golden AReaL's mutations run on
SIIRL_GOLDEN = "highway_openvla"  #: the golden siiRL's mutations run on (its quickest)
#: framework → the golden its mutations run on, and that golden's package
GOLDEN = {
    "rlinf": (RLINF_GOLDEN, "libero_openvla_oft"),
    "verl": (VERL_GOLDEN, "pusht_openvla_oft"),
    "areal": (AREAL_GOLDEN, "highway_portable"),
    "siirl": (SIIRL_GOLDEN, "highway_openvla"),
}
UPDATES = "12"

pytestmark = pytest.mark.slow

#: RLinf's mutation → the code that makes it, run before the learning run in its process
RLINF_MUTATIONS = {
    "control": "",
    "advantage_sign": """
        registry = importlib.import_module("rlinf.algorithms.registry").ADV_REGISTRY

        def flipped(function):
            def advantages(*args, **kwargs):
                out = function(*args, **kwargs)
                return (-out[0], *out[1:])

            return advantages

        for name, function in list(registry.items()):
            registry[name] = flipped(function)
    """,
    "loss_mask_one_token_off": """
        import torch

        policy = importlib.import_module(f"{PACKAGE}.model.policy").Policy
        evaluate = policy.evaluate

        def shifted(self, *args, **kwargs):
            log_probs, entropy, values = evaluate(self, *args, **kwargs)
            if torch.is_grad_enabled():  # the loss's mask starts one token late: the first
                # action token (the one the task judges) is scored but never trained
                log_probs = torch.cat([log_probs[:, :1].detach(), log_probs[:, 1:]], dim=1)
            return log_probs, entropy, values

        policy.evaluate = shifted
    """,
    "frozen_adapter": """
        import torch

        policy = importlib.import_module(f"{PACKAGE}.targets.rlinf.policy")
        load = policy.load_policy

        def frozen(*args, **kwargs):
            model = load(*args, **kwargs)
            for name, weight in model.named_parameters():
                if "lora_" in name:
                    weight.register_hook(torch.zeros_like)
            return model

        policy.load_policy = frozen
    """,
    "rewards_unrelated_to_actions": """
        import torch

        registry = importlib.import_module("rlinf.algorithms.registry").ADV_REGISTRY
        shuffle = torch.Generator().manual_seed(1)

        def shuffled(function):
            def advantages(*args, **kwargs):
                rewards = kwargs["rewards"]
                order = torch.randperm(rewards.numel(), generator=shuffle)
                kwargs["rewards"] = rewards.flatten()[order].view_as(rewards)
                return function(*args, **kwargs)

            return advantages

        for name, function in list(registry.items()):
            registry[name] = shuffled(function)
    """,
    "steps_too_small": "ARGS += ['--lr', '1e-7']",
}

#: mutation → the code that makes it, run before verl's learning run in its process (verl's
#: VLA code is in no wheel: its source first, from ``VERL_SRC``)
VERL_MUTATIONS = {
    "advantage_sign": """
        importlib.import_module(f"{PACKAGE}.targets.verl.source").use_source()
        core_algos = importlib.import_module("verl.trainer.ppo.core_algos")

        def flipped(function):
            def advantages(*args, **kwargs):
                out = function(*args, **kwargs)
                return (-out[0], *out[1:])

            return advantages

        # compute_advantage calls GRPO's by the module's name, the others from the registry
        grpo = core_algos.compute_grpo_outcome_advantage
        core_algos.compute_grpo_outcome_advantage = flipped(grpo)
        registry = core_algos.ADV_ESTIMATOR_REGISTRY
        for name, function in list(registry.items()):
            registry[name] = flipped(function)
    """,
}

#: AReaL's mutation → the code that makes it: its own advantage code
#: (``PPOActor._compute_advantages``, which ``PPOTrainer.train`` calls), its sign flipped
AREAL_MUTATIONS = {
    "advantage_sign": """
        actor = importlib.import_module("areal.trainer.ppo.actor").PPOActor
        compute = actor._compute_advantages

        def flipped(self, data):
            out = compute(self, data)
            out["advantages"] = -out["advantages"]
            return out

        actor._compute_advantages = flipped
    """,
}

#: siiRL's mutation → the code that makes it: its own GRPO estimator, flipped
SIIRL_MUTATIONS = {
    "advantage_sign": """
        core_algos = importlib.import_module("siirl.dag_worker.core_algos")
        grpo = core_algos.compute_grpo_outcome_advantage

        def flipped(*args, **kwargs):
            advantages, returns = grpo(*args, **kwargs)
            return -advantages, returns

        core_algos.compute_grpo_outcome_advantage = flipped
    """,
}
#: framework → its mutations
MUTATIONS = {
    "rlinf": RLINF_MUTATIONS,
    "verl": VERL_MUTATIONS,
    "areal": AREAL_MUTATIONS,
    "siirl": SIIRL_MUTATIONS,
}


#: The mutations that break learning in either direction: the top quarter's run shows it (the
#: control, and rewards unrelated to the actions, which can drift into one quarter, run both).
ONE_QUARTER = {"advantage_sign", "loss_mask_one_token_off", "frozen_adapter", "steps_too_small"}


def run(framework: str, mutation: str, tmp_path: Path) -> subprocess.CompletedProcess:
    golden, package = GOLDEN[framework]
    script = tmp_path / "mutated.py"
    quarter = "ARGS += ['--quarter', 'top']\n" if mutation in ONE_QUARTER else ""
    script.write_text(
        "import importlib, sys\n"
        f"PACKAGE = {package!r}\n"
        f"ARGS = ['--target', {framework!r}, '--updates', {UPDATES!r}, "
        f"'--out', {str(tmp_path)!r}]\n"
        + quarter
        + textwrap.dedent(MUTATIONS[framework][mutation])
        + "\nif __name__ == '__main__':\n"
        + "    sys.exit(importlib.import_module(f'{PACKAGE}.learn').main(ARGS))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(GOLDENS / golden / "src"), "HOME": str(tmp_path)}
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


CASES = [
    pytest.param(framework, mutation, id=f"{framework}-{mutation}")
    for framework, mutations in MUTATIONS.items()
    for mutation in mutations
]


@pytest.mark.parametrize(("framework", "mutation"), CASES)
def test_the_learning_run_fails_under_each_mutation(
    framework: str, mutation: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if framework == "verl":
        request.getfixturevalue("verl_src")  # VERL_SRC for the run, or skip
    elif importlib.util.find_spec(framework) is None:
        pytest.skip(f"needs {framework}")
    done = run(framework, mutation, tmp_path)
    report = done.stdout + done.stderr[-3000:]
    if mutation == "control":
        assert done.returncode == 0 and "learned" in done.stdout, report
    else:
        assert done.returncode == 1 and "DID NOT LEARN" in done.stdout, report
    assert (tmp_path / f"learning-{framework}.png").is_file()
