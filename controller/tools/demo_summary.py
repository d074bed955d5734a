"""What the demo prints when it stops: rounds, settlements and the house result, from the table's meters.

Asked of the daemon itself (``meters`` and ``status`` over its command socket,
on a client of its own: the simulated dealer's client may be mid-call), so
the figures are the table's, in the table's currency.
"""

from __future__ import annotations

from typing import Any

from controller.daemon.client import CommandClient, DaemonUnavailable
from controller.daemon.keys import ClientCredentials
from controller.money import Currency
from controller.tools.event_text import credits_text


def _rounds(n: int) -> str:
    return f"{n} round{'s' if n != 1 else ''}"


def rounds_ended(meters: dict[str, Any]) -> tuple[int, int]:
    """The rounds the table settled and voided, from its ``meters`` reply: what counts as played."""
    totals = meters.get("totals") or meters.get("table") or {}
    return int(totals.get("rounds_settled", 0)), int(totals.get("rounds_voided", 0))


def summary(endpoint: str, played: int, key: ClientCredentials | None = None) -> list[str]:
    """Lines for the end of a demo, every figure the table's own: the rounds it finished (settled or
    voided), the one it was in the middle of (if any), the money, the credits. ``played`` (the simulated
    dealer's count) is said only when the table cannot be asked: a dealer stopped mid-round has not
    counted the round the table may still have settled."""
    client = CommandClient(endpoint, timeout=2.0, key=key)
    try:
        meters = client.call("meters")
        status = client.call("status")
    except DaemonUnavailable as exc:
        return [f"summary: the dealer played {_rounds(played)}; the table's meters are not available ({exc})"]
    finally:
        client.close()
    cur = Currency.from_dict(status.get("currency"))
    totals = meters.get("totals") or meters.get("table") or {}
    seats = meters.get("seats", {})
    settlements = sum(m.get("rounds", 0) for m in seats.values())
    wagered = sum(m.get("wagered", 0) for m in seats.values())
    settled, voided = rounds_ended(meters)
    phase = str(status.get("phase", ""))
    unfinished = (f"; round {status.get('round')} unfinished (stopped while {phase})"
                  if phase in ("betting", "dealing") else "")
    return [
        f"summary: {_rounds(settled + voided)} played: {settled} settled "
        f"({settlements} seat settlements), {voided} voided{unfinished}",
        f"  wagered {cur.format(wagered)}; house result {cur.signed(totals.get('house_net', 0))}",
        f"  credits {credits_text(status.get('credits', {}), cur)}",
    ]
