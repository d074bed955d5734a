"""Errors of configuration files, worded the same way for every kind of file.

Table files, shoe profiles, pin maps and scenario files are all read once at
start and validated strictly. A person fixing one needs the file, the key and
the reason, one line per problem, whichever file it is; this module is the
one place that words them.
"""

from __future__ import annotations

from collections.abc import Hashable
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


#: Far deeper than any file of the project needs (theirs are a few levels). PyYAML composes a node by
#: recursion, so ``[[[[...`` a couple of thousand deep ran out of stack (RecursionError, not the file's
#: error); refused at this depth, the parser, pydantic and ``repr`` of the data all stay far from the limit.
MAX_DEPTH = 100
#: No value of a file is a number this long; Python cannot even show one past 4300 digits.
MAX_DIGITS = 1000


class _TooDeep(Exception):
    """Raised by the loader at :data:`MAX_DEPTH`; not a YAMLError, since the file may well be valid YAML."""

    def __init__(self, mark: yaml.Mark) -> None:
        super().__init__(f"line {mark.line + 1}, column {mark.column + 1}: nested too deeply "
                         f"(more than {MAX_DEPTH} levels of lists and mappings)")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (PyYAML would silently keep the last),
    and nesting past :data:`MAX_DEPTH` (PyYAML would recurse until Python's stack runs out)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _TooDeep(self.peek_event().start_mark)  # type: ignore[no-untyped-call]
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """PyYAML's, with a scalar it cannot make a value of (an int past Python's 4300 digits, a date
        ``2001-02-30``, ``!!float x``) a marked YAML error: its ValueError escaped every file's error."""
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, OverflowError) as exc:
            value = str(node.value) if isinstance(node, yaml.ScalarNode) else _kind(node)
            shown = value if len(value) <= 30 else value[:30] + "..."
            why = str(exc).split(";")[0]  # not int()'s advice to call sys.set_int_max_str_digits()
            raise yaml.constructor.ConstructorError(None, None, f"cannot read {shown!r}: {why}",
                                                    node.start_mark) from None


def _kind(node: yaml.Node) -> str:
    """PyYAML's word for a node (``scalar``, ``sequence``, ``mapping``), as in its own errors."""
    return type(node).__name__.removesuffix("Node").lower()


def _mapping_no_duplicates(loader: _UniqueKeyLoader, node: yaml.Node, deep: bool = False) -> Any:
    if not isinstance(node, yaml.MappingNode):  # !!map [1]: PyYAML's own words for it
        raise yaml.constructor.ConstructorError(
            None, None, f"expected a mapping node, but found {_kind(node)}", node.start_mark)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, Hashable):  # a list or a mapping as a key: a set would raise TypeError
            raise yaml.constructor.ConstructorError(None, None, "found unhashable key", key_node.start_mark)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice",
                                                    key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


def _int_of_sane_size(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> int:
    """PyYAML's int, refused at :data:`MAX_DIGITS`: ``0x`` and ``0b`` integers have no digit limit, and
    an error naming one (pydantic's ``got ...``) raised int's ValueError when it showed it."""
    value: int = loader.construct_yaml_int(node)
    if abs(value) >= 10**MAX_DIGITS:
        raise ValueError(f"a number of more than {MAX_DIGITS} digits")
    return value


def _str_without_nul(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> str:
    """PyYAML's string, refused with a NUL in it (``"\\0"``): no name, path or endpoint of a file holds
    one, and a path with one made the operating system's calls raise ValueError ("embedded null byte")
    after the file was read, not the file's error (a fuzz test, 2026-12-07)."""
    value: str = loader.construct_yaml_str(node)
    if "\0" in value:
        raise ValueError("a NUL character in a string")
    return value


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_no_duplicates)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:str", _str_without_nul)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _int_of_sane_size)


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
    (a key given twice in one mapping included: PyYAML alone would silently keep the last) or is
    nested more than :data:`MAX_DEPTH` deep.
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
    except _TooDeep as exc:
        raise error(path, [(None, str(exc))]) from None
    except RecursionError:  # read from a caller already deep in its stack: still the file's error
        raise error(path, [(None, "nested too deeply")]) from None
