"""Device profiles of card shoes (``firmware_configs/shoes/*.yaml``), validated before anything opens.

A wrong baud rate or a typo'd key on a table in a casino shows up as "no
cards", hours later, far from the file. So a profile is read once, every key
is checked (an unknown key is an error, not a silently ignored option), and
any problem stops the start with :class:`ProfileError`, whose message names
the file, the key and the reason.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from controller.configfile import ConfigFileError, read_yaml


class ProfileError(ConfigFileError):
    """A profile that cannot be used. ``str()`` reads ``<file>: key '<key>': <reason>`` per problem."""


class Backoff(BaseModel):
    """Waits between reconnect attempts: ``initial`` doubles after each failure up to ``max``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    initial: float = Field(gt=0, le=60)
    max: float = Field(gt=0, le=3600)

    @field_validator("max")
    @classmethod
    def _not_below_initial(cls, value: float, info: ValidationInfo) -> float:
        initial = info.data.get("initial")
        if initial is not None and value < initial:
            raise ValueError(f"must be at least reconnect.initial ({initial}), got {value}")
        return value


class ShoeProfile(BaseModel):
    """One shoe or shuffler: where it is, how the line is set up, and which protocol it speaks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = ""
    #: Anything ``serial.serial_for_url`` opens: /dev/ttyUSB0, a pty, socket://host:port, loop://.
    port: str = Field(min_length=1)
    # protocol is declared before the keys whose checks depend on it (fields validate in this order).
    protocol: Literal["v1", "plain"]
    baud: int = Field(gt=0, le=4_000_000)
    bytesize: Literal[5, 6, 7, 8] = 8
    parity: Literal["N", "E", "O", "M", "S"] = "N"
    stopbits: float = 1

    @field_validator("stopbits")
    @classmethod
    def _stopbits(cls, value: float) -> float:
        if value not in (1, 1.5, 2):
            raise ValueError(f"must be 1, 1.5 or 2, got {value}")
        return value
    #: plain only: which line ends a reader may use (``any``: CR, LF or CR LF; or exactly one of them).
    line_end: Literal["any", "lf", "cr", "crlf"] = "any"
    #: v1 only: seconds without any valid frame before the line is taken as dead and reopened.
    heartbeat_timeout: float | None = Field(default=None, validate_default=True)
    reconnect: Backoff
    #: ``reader``: a shoe the dealer draws from (it reports what it reads). ``dealing_shuffler``:
    #: a card comes out only when the host sends DISPENSE, which the daemon does when the rules
    #: call for a card (docs/shoe-protocol.md, "Dealing shufflers").
    mode: Literal["reader", "dealing_shuffler"] = "reader"
    #: dealing_shuffler only: seconds from DISPENSE to its card before the table tilts for the dealer.
    dispense_timeout: float = Field(default=5.0, gt=0, le=600)

    @field_validator("mode")
    @classmethod
    def _shuffler_speaks_v1(cls, value: str, info: ValidationInfo) -> str:
        if value == "dealing_shuffler" and info.data.get("protocol") != "v1":
            raise ValueError("a dealing shuffler needs protocol v1 (DISPENSE is a v1 command)")
        return value

    @field_validator("port")
    @classmethod
    def _known_scheme(cls, value: str) -> str:
        if "://" in value:
            scheme = value.split("://", 1)[0]
            handler = f"serial.urlhandler.protocol_{scheme}"
            if not scheme.isidentifier() or importlib.util.find_spec(handler) is None:
                raise ValueError(f"pyserial has no handler for URL scheme {scheme!r} in {value!r}")
        return value

    @field_validator("bytesize")
    @classmethod
    def _eight_bits_for_v1(cls, value: int, info: ValidationInfo) -> int:
        if info.data.get("protocol") == "v1" and value != 8:
            raise ValueError(f"protocol v1 needs bytesize 8 (frames carry binary bytes), got {value}")
        return value

    @field_validator("line_end")
    @classmethod
    def _line_end_for_plain(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("protocol") == "v1" and value != "any":
            raise ValueError("v1 frames have no line ends: remove this key (it is for the plain profile)")
        return value

    @field_validator("heartbeat_timeout")
    @classmethod
    def _heartbeat_matches_protocol(cls, value: float | None, info: ValidationInfo) -> float | None:
        protocol = info.data.get("protocol")
        if protocol == "v1":
            if value is None:
                raise ValueError("required for protocol v1 (seconds, e.g. 3.0; the shoe beats every 1 s)")
            if not math.isfinite(value) or not 0.1 <= value <= 600:
                raise ValueError(f"must be between 0.1 and 600 seconds, got {value}")
        elif protocol == "plain" and value is not None:
            raise ValueError("plain readers send no heartbeats: remove this key")
        return value


def _problems(exc: ValidationError) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    for err in exc.errors():
        key = ".".join(str(part) for part in err["loc"]) or None
        reason = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            reason = "unknown key"
            parent: Any = ShoeProfile if len(err["loc"]) == 1 else Backoff
            reason += f" (known: {', '.join(parent.model_fields)})"
        elif err["type"] not in ("missing", "value_error"):
            reason += f", got {err['input']!r}"
        out.append((key, reason))
    return out


def parse_profile(data: Any, source: Path | str = "<profile>") -> ShoeProfile:
    """Validate already-loaded data; ``source`` names it in errors."""
    if not isinstance(data, dict):
        reason = f"the top level must be a mapping of keys, not {type(data).__name__}"
        raise ProfileError(source, [(None, reason)])
    try:
        return ShoeProfile.model_validate(data)
    except ValidationError as exc:
        raise ProfileError(source, _problems(exc)) from None


def load_profile(path: Path | str) -> ShoeProfile:
    """Read and validate a shoe profile; :class:`ProfileError` names the file, key and reason."""
    path = Path(path)
    data = read_yaml(path, ProfileError)
    if data is None:
        raise ProfileError(path, [(None, "the file is empty")])
    return parse_profile(data, path)
