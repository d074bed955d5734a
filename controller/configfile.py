"""Errors of configuration files, worded the same way for every kind of file.

Table files, shoe profiles, pin maps and scenario files are all read once at
start and validated strictly. A person fixing one needs the file, the key and
the reason, one line per problem, whichever file it is; this module is the
one place that words them.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

Problem = tuple[str | None, str]


class ConfigFileError(ValueError):
    """A file that cannot be used; ``str()`` is one ``<file>: key '<key>': <reason>`` line per problem."""

    def __init__(self, path: Path | str, problems: list[Problem]) -> None:
        self.path = Path(path)
        self.problems = problems
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


def read_yaml(path: Path, error: type[ConfigFileError]) -> object:
    """A YAML file's data; ``error`` naming the file when it cannot be read or is not YAML."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise error(path, [(None, f"cannot read: {exc}")]) from None
    except yaml.YAMLError as exc:
        raise error(path, [(None, f"not valid YAML: {exc}".replace("\n", " "))]) from None
