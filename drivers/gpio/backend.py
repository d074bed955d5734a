"""The pin backend: the only module that knows gpiozero.

The panel code above asks for "an input on BCM 17, pulled up, active low,
tell me when it changes" and "an output on BCM 27, active high" and nothing
more, so a different pin source (an I2C expander, a remote header) is one
new class here and no change elsewhere. Every call names the line's chip
(the header, or an expander the table file lists); each chip has its own pin
factory: on a Pi, the expander's gpiochip through lgpio
(:mod:`drivers.gpio.expanders`), in simulation one more mock factory. gpiozero's pin factory is injected,
as gpiozero itself does in its test suite: the real factory on a Pi
(RPi.GPIO on a Pi 3/4, lgpio on any Pi), :class:`gpiozero.pins.mock.MockFactory`
everywhere else. Both are chosen by name; a factory that cannot be loaded is
an error, never a quiet switch to the mock (a table that silently reads no
buttons is worse than one that does not start).

Debounce is deliberately NOT gpiozero's ``bounce_time``: the mock pin ignores
it (so tests would prove nothing), and RPi.GPIO's ``bouncetime`` drops every
edge inside the window after an accepted one, which can lose the final
release of a bouncing contact and leave a sensor looking covered. The
settle-time debouncer in :mod:`drivers.gpio.debounce` runs above every
backend, so the logic a test exercises is the one that runs on the floor.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, Protocol

from drivers.gpio.pinmap import HEADER

FACTORIES = ("mock", "rpigpio", "lgpio")
Pull = Literal["up", "down", "none"]


class BackendError(RuntimeError):
    """A pin backend that cannot be opened (names the backend and what to install)."""


class LineError(OSError):
    """A line that cannot be read or written: an expander that stops answering, a line closed under us.

    The backend's one error for it, whatever the pin library raised: lgpio raises its own ``lgpio.error``
    (not an OSError) and RPi.GPIO a RuntimeError, so the panel, which must turn a dead line into a fault
    and never into a crash, catches this and only this. Its text is the library's."""


def _line_error(exc: Exception) -> LineError:
    """``exc`` as a :class:`LineError`: an OSError keeps its errno and words ("[Errno 121] Remote I/O
    error"), anything else says what raised it ("lgpio.error: ...")."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return LineError(exc.errno, exc.strerror)
    if isinstance(exc, OSError):
        return LineError(str(exc))
    return LineError(f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}")


class InputLine(Protocol):
    """An input's line; reading a line that cannot be read raises :class:`LineError`."""

    @property
    def is_active(self) -> bool: ...

    def close(self) -> None: ...


class OutputLine(Protocol):
    """An output's line; writing a line that cannot be written raises :class:`LineError`."""

    @property
    def lit(self) -> bool: ...

    def set(self, lit: bool) -> None: ...

    def close(self) -> None: ...


class PinBackend(Protocol):
    """What the panel needs from pins. ``on_change`` may be called from any thread."""

    name: str

    def input(self, pin: int, *, pull: Pull, active_high: bool,
              on_change: Callable[[bool], None], chip: str = HEADER) -> InputLine: ...

    def output(self, pin: int, *, active_high: bool, chip: str = HEADER) -> OutputLine: ...

    def close(self) -> None: ...


@contextlib.contextmanager
def _line_errors(passing: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Whatever the pin library raises for a line (lgpio's own error for a chip that does not answer) as a
    :class:`LineError`; ``passing``: errors that pass as they are."""
    try:
        yield
    except passing:
        raise
    except Exception as exc:
        raise _line_error(exc) from exc


def _opening() -> contextlib.AbstractContextManager[None]:
    """Opening a line: gpiozero's own errors (a pin in use, no such pin) say what is wrong with the map
    and pass as they are; anything else the library raises (a chip that does not answer) is a LineError,
    which the daemon's start reports as it reports any line it cannot open."""
    from gpiozero import GPIOZeroError  # type: ignore[import-untyped, unused-ignore]

    return _line_errors((GPIOZeroError,))


class _ZeroLine:
    """A gpiozero device as a line: every call on it raises :class:`LineError` for a dead line."""

    def __init__(self, device: Any) -> None:
        self._device = device

    def close(self) -> None:
        with _line_errors():  # releasing a dead chip's line (lgpio frees it on the chip)
            self._device.close()


class _ZeroInput(_ZeroLine):
    @property
    def is_active(self) -> bool:
        with _line_errors():
            return bool(self._device.is_active)


class _ZeroOutput(_ZeroLine):
    @property
    def lit(self) -> bool:
        with _line_errors():
            return bool(self._device.is_lit)

    def set(self, lit: bool) -> None:
        with _line_errors():
            if lit:
                self._device.on()
            else:
                self._device.off()


class GpioZeroBackend:
    """Inputs and LEDs from gpiozero over an injected pin factory.

    Inputs are ``DigitalInputDevice``, not ``Button``: a ``Button`` starts a
    hold thread per pin that wakes every 100 ms for ``when_held``, which the
    panel does not use (hold repeat and stuck detection run on the panel's
    clock), and closing ten of them takes most of a second.
    """

    def __init__(self, factory: Any, name: str = "gpiozero", chips: dict[str, Any] | None = None) -> None:
        self.factory = factory
        self.name = name
        #: The expanders' pin factories by chip name (the header's is ``factory``).
        self.chips: dict[str, Any] = dict(chips or {})
        self._devices: list[_ZeroLine] = []
        self._lock = threading.Lock()

    def factory_of(self, chip: str) -> Any:
        """The pin factory of ``chip`` (BackendError for a chip this backend was not given)."""
        if chip == HEADER:
            return self.factory
        if chip not in self.chips:
            chips = ", ".join([HEADER, *self.chips])
            raise BackendError(f"no expander {chip!r} on this backend; chips: {chips}")
        return self.chips[chip]

    def input(self, pin: int, *, pull: Pull, active_high: bool,
              on_change: Callable[[bool], None], chip: str = HEADER) -> InputLine:
        from gpiozero import DigitalInputDevice  # type: ignore[import-untyped, unused-ignore]

        factory = self.factory_of(chip)
        with _opening():
            if pull == "none":
                device = DigitalInputDevice(pin, pull_up=None, active_state=active_high, bounce_time=None,
                                            pin_factory=factory)
            else:
                device = DigitalInputDevice(pin, pull_up=(pull == "up"), bounce_time=None,
                                            pin_factory=factory)
        device.when_activated = lambda: on_change(True)
        device.when_deactivated = lambda: on_change(False)
        line = _ZeroInput(device)
        with self._lock:
            self._devices.append(line)
        return line

    def output(self, pin: int, *, active_high: bool, chip: str = HEADER) -> OutputLine:
        from gpiozero import LED  # type: ignore[import-untyped, unused-ignore]

        factory = self.factory_of(chip)
        with _opening():
            line = _ZeroOutput(LED(pin, active_high=active_high, initial_value=False, pin_factory=factory))
        with self._lock:
            self._devices.append(line)
        return line

    def close(self) -> None:
        with self._lock:
            devices, self._devices = self._devices, []
        for device in devices:
            device.close()


@functools.cache
def _quiet_pin_class() -> Any:
    """gpiozero's ``MockPin`` without its change history.

    ``MockPin`` appends every state change to ``states`` for its own test
    helpers (``assert_states``), so a simulated table that runs for days grows
    by every press and every lamp blink (45,000 entries after 1,500 Baccarat
    rounds). This subclass keeps only the current state, so memory stays flat.
    """
    from gpiozero.pins.mock import MockPin, PinState  # type: ignore[import-untyped, unused-ignore]

    class QuietMockPin(MockPin):  # type: ignore[misc, unused-ignore]
        def _change_state(self, value: bool) -> bool:
            if bool(self._state) == value:  # type: ignore[has-type, unused-ignore]
                return False
            self._state = value
            self._last_change = time.monotonic()
            self.states = [PinState(0.0, value)]
            return True

    return QuietMockPin


def own_simulation(factory: Any) -> bool:
    """Whether ``factory`` is the simulated world :func:`make_factory` makes (no other level source).

    Such pins start from nothing, so the daemon sets up what real panels keep
    through a restart (plugged in, chips on their spots). Any other factory,
    a Pi's or mock pins whose levels something outside holds, reads the world
    as it is.
    """
    return getattr(factory, "pin_class", None) is _quiet_pin_class()


def make_factory(name: str) -> Any:
    """The gpiozero pin factory called ``name`` (one of :data:`FACTORIES`)."""
    try:
        if name == "mock":
            from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped, unused-ignore]

            return MockFactory(pin_class=_quiet_pin_class())
        if name == "rpigpio":
            from gpiozero.pins.rpigpio import RPiGPIOFactory  # type: ignore[import-untyped, unused-ignore]

            return RPiGPIOFactory()
        if name == "lgpio":
            from gpiozero.pins.lgpio import LGPIOFactory  # type: ignore[import-untyped, unused-ignore]

            return LGPIOFactory()
    except Exception as exc:  # import errors and "not a Pi" errors alike
        hint = {"rpigpio": "on a Pi 3/4: pip install 'croupier[pi]' (RPi.GPIO)",
                "lgpio": "on a Raspberry Pi: pip install 'croupier[pi]' (lgpio, for the header and the "
                         "expanders on any Pi)"}.get(name, "")
        why = f"pin factory {name!r} cannot be opened: {exc}"
        if not any(Path("/dev").glob("gpiochip[0-9]*")):
            why += " (this machine has no GPIO chip /dev/gpiochip0: not a Raspberry Pi?)"
        raise BackendError(why + (f"; {hint}" if hint else "")) from exc
    raise BackendError(f"unknown pin factory {name!r}; known: {', '.join(FACTORIES)}")


class SimulatedPins:
    """The other side of mock factories: drive inputs and read outputs by chip and pin number.

    This is the simulated hardware the control socket and the tests use; it
    speaks electrical levels (high/low), not meanings, exactly like a finger
    on a contact or a probe on a lamp. ``chips`` are the simulated expanders
    beside the header (the same names as the backend's).
    """

    def __init__(self, factory: Any, chips: dict[str, Any] | None = None) -> None:
        from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped, unused-ignore]

        self.backend = GpioZeroBackend(factory, "mock", chips)
        if not all(isinstance(f, MockFactory) for f in [factory, *self.backend.chips.values()]):
            raise BackendError("simulated pins need gpiozero's MockFactory")
        self.factory = factory
        self._lock = threading.Lock()

    def drive(self, pin: int, high: bool, chip: str = HEADER) -> None:
        """Drive an input pin's level (from any thread; one drive at a time)."""
        mock = self.backend.factory_of(chip).pin(pin)
        with self._lock:
            if high:
                mock.drive_high()
            else:
                mock.drive_low()

    def level(self, pin: int, chip: str = HEADER) -> bool:
        """The level of a pin now (an output's driven level, an input's read level)."""
        return bool(self.backend.factory_of(chip).pin(pin).state)
