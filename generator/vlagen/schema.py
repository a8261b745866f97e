"""The spec's JSON Schema, as ``vlagen schema`` prints it and every generated package holds it
(:data:`vlagen.spec.SCHEMA_FILE`): the spec model's, with the framework names that only the
target registry, above the spec, knows."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from .spec import Spec
from .targets import framework_names


def json_schema() -> dict[str, Any]:
    """The spec's JSON Schema (draft 2020-12)."""
    schema = Spec.model_json_schema()
    target = schema["$defs"]["Target"]["properties"]
    framework = {**target["framework"], "enum": list(framework_names())}
    target["framework"] = dict(sorted(framework.items()))  # pydantic's order: by key
    return schema


@cache
def schema_text() -> str:
    """The schema as the file :data:`~vlagen.spec.SCHEMA_FILE` holds it: beside ``vlagen init``'s
    spec and every generated package's ``vlagen.yaml``, whose first line names it for editors."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
