"""The roads' JSON contract: docs/schema/roads.schema.json and docs/roads-vectors.json are what the code
generates, and what ``croupier roads --json`` prints validates against that schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from controller.cli import main
from signage.roads_contract import SHOES, rendered, results, schema

ROOT = Path(__file__).resolve().parents[1]
FILES = {
    "schema": ROOT / "docs" / "schema" / "roads.schema.json",
    "vectors": ROOT / "docs" / "roads-vectors.json",
}


def test_the_committed_schema_and_vectors_are_the_generated_ones() -> None:
    for what, path in FILES.items():
        assert path.read_text(encoding="utf-8") == rendered(what), (
            f"{path} is stale: python -m signage.roads_contract {what} > {path.relative_to(ROOT)}")


def test_every_vector_and_the_command_output_validate_and_cells_name_their_streak(
    capsys: pytest.CaptureFixture[str],
) -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    validator = jsonschema.Draft202012Validator(schema())
    vectors = json.loads(FILES["vectors"].read_text(encoding="utf-8"))["vectors"]
    assert [v["name"] for v in vectors] == list(SHOES)
    validator.validate({"shoes": [v["roads"] for v in vectors]})
    dragon = next(v for v in vectors if v["results"] == "BBBBBBBBBPTB")["roads"]["big_road"]
    assert [c["streak"] for c in dragon] == [0] * 9 + [1, 2]  # the tail along row 6 is still streak 0
    assert main(["roads", str(ROOT / "tests" / "scenarios" / "baccarat.yaml"), "--json"]) == 0
    validator.validate(json.loads(capsys.readouterr().out))
    with pytest.raises(ValueError, match="'X' is not a round"):
        results("BX")
