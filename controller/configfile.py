"""Errors of configuration files, worded the same way for every kind of file.

Table files, shoe profiles, pin maps and scenario files are all read once at
start and validated strictly. A person fixing one needs the file, the key and
the reason, one line per problem, whichever file it is; this module is the
one place that words them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

Problem = tuple[str | None, str]


class ConfigFileError(ValueError):
    """A file that cannot be used; ``str()`` is one ``<file>: key '<key>': <reason>`` line per problem."""

    def __init__(self, path: Path | str, problems: list[Problem], *, not_yaml: bool = False) -> None:
        self.path = Path(path)
        self.problems = problems
        #: The file was read but is not YAML (:func:`read_yaml`): what a caller decides on (another kind of
        #: file, say), never the problem's words, which are for people.
        self.not_yaml = not_yaml
        lines = [f"{path}: " + (f"key '{key}': " if key else "") + reason for key, reason in problems]
        super().__init__("\n".join(lines))

    @property
    def key(self) -> str | None:
        """The key of the first problem (``None`` for a file-level problem such as bad YAML)."""
        return self.problems[0][0]


def validation_problems(exc: ValidationError, prefix: str = "") -> list[Problem]:
    """pydantic's errors as (dotted key, reason) pairs; ``prefix`` is the key of the validated part."""
    out: list[Problem] = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
        key = f"{prefix}.{loc}" if prefix and loc else (prefix or loc or None)
        reason = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            reason = "unknown key"
        elif err["type"] not in ("missing", "value_error"):
            reason += f", got {err['input']!r}"
        out.append((key, reason))
    return out


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (PyYAML would silently keep the last)."""


def _mapping_no_duplicates(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice",
                                                    key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_no_duplicates)


def _yaml_reason(exc: yaml.YAMLError) -> str:
    """One line: where in the file (line and column, counted from 1) and what is wrong there."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        return f"not valid YAML: line {mark.line + 1}, column {mark.column + 1}: {what}"
    return f"not valid YAML: {exc}".replace("\n", " ")


def read_yaml(path: Path, error: type[ConfigFileError]) -> object:
    """A YAML file's data, the one way every YAML file of the project is read.

    ``error`` names the file when it cannot be read, and the file and line when it is not YAML
    (a key given twice in one mapping included: PyYAML alone would silently keep the last).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(path, [(None, f"cannot read: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError as exc:
        raise error(path, [(None, f"cannot read: {exc}")]) from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise error(path, [(None, _yaml_reason(exc))], not_yaml=True) from None
