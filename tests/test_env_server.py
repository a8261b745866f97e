"""The env server of every package (``python -m <pkg>.env.serve``) and ``env.remote``: the spec
takes an address or refuses it where it is written; each package gets the server, its client,
the wire, their tests, a README section and launch scripts that say how to point a training
job at it; the server's own environment needs no torch."""

from __future__ import annotations

import pytest

from conftest import MINIMAL_SPEC, REPO
from vlagen.api import generate
from vlagen.errors import SpecError
from vlagen.load import load_spec_text
from vlagen.plan import make_plan

PACKAGE = "src/tiny_vla"


def _with_remote(address: str) -> str:
    return MINIMAL_SPEC.replace("env:\n", f"env:\n  remote: {address!r}\n", 1)


@pytest.mark.parametrize(
    "address",
    ["unix:///run/sim/env.sock", "unix://@vla", "tcp://sim-host:5555", "tcp://[::1]:7000"],
)
def test_the_spec_takes_an_env_servers_address(address: str) -> None:
    assert load_spec_text(_with_remote(address), "s.yaml").spec.env.remote == address


@pytest.mark.parametrize(
    "address",
    [
        "http://sim:5555",
        "tcp://sim",
        "unix://relative.sock",
        "unix://@",
        "sim:5555",
    ],
)
def test_another_address_is_refused_where_it_is_written(address: str) -> None:
    text = _with_remote(address)
    with pytest.raises(SpecError) as raised:
        load_spec_text(text, "s.yaml")
    (issue,) = raised.value.issues
    assert (
        issue.dotted == "env.remote"
        and "unix:///PATH, unix://@NAME or tcp://HOST:PORT" in issue.message
    )
    assert issue.line == 1 + text.splitlines().index("env:") + 1


@pytest.mark.parametrize("port", ["0", "65536", "99999"])
def test_a_port_out_of_range_is_named_as_the_port(port: str) -> None:
    with pytest.raises(SpecError) as raised:
        load_spec_text(_with_remote(f"tcp://sim:{port}"), "s.yaml")
    (issue,) = raised.value.issues
    assert issue.dotted == "env.remote"
    assert f"the port of 'tcp://sim:{port}' is 1 to 65535 (a client's), got {port}" in issue.message


def test_every_package_gets_the_server_its_client_the_wire_and_their_tests() -> None:
    tree = generate(load_spec_text(MINIMAL_SPEC, "s.yaml").spec).tree
    for module in ("serve", "remote", "tokens", "wire"):
        assert f"{PACKAGE}/env/{module}.py" in tree, module
    assert "tests/test_env_remote.py" in tree
    readme = tree["README.md"].content.decode()
    assert "### Simulator in its own environment or machine" in readme
    assert "TINY_VLA_ENV_REMOTE=" in readme and "TINY_VLA_ENV_TOKEN_FILE=" in readme
    assert "python -m tiny_vla.env.serve --bind" in readme
    launch = tree[f"{PACKAGE}/targets/rlinf/launch.sh"].content.decode()
    assert "TINY_VLA_ENV_REMOTE=ADDRESS" in launch and "env.remote" in launch
    pyproject = tree["pyproject.toml"].content.decode()
    assert 'remote = ["pyzmq>=26"]' in pyproject


def test_the_servers_environment_needs_neither_torch_nor_a_framework() -> None:
    for spec in sorted((REPO / "specs").glob("*.yaml")):
        plan = make_plan(load_spec_text(spec.read_text(encoding="utf-8"), str(spec)).spec)
        names = " ".join(plan.env.serve_requirements)
        assert "torch" not in names and "pyzmq" in names and "numpy" in names, spec.stem
        for framework in ("rlinf", "siirl", "verl", "areal", "transformers"):
            assert framework not in names, (spec.stem, framework)
