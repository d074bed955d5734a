"""What the demo prints when it stops: rounds, settlements and the house result, from the table's meters.

Asked of the daemon itself (``meters`` and ``status`` over its command socket,
on a client of its own: the simulated dealer's client may be mid-call), so
the figures are the table's, in the table's currency.
"""

from __future__ import annotations

from controller.daemon.client import CommandClient, DaemonUnavailable
from controller.daemon.keys import ClientCredentials
from controller.money import Currency
from controller.tools.watch import credits_text


def summary(endpoint: str, played: int, key: ClientCredentials | None = None) -> list[str]:
    """Lines for the end of a demo: ``played`` rounds by the dealer, and what the table metered."""
    client = CommandClient(endpoint, timeout=2.0, key=key)
    try:
        meters = client.call("meters")
        status = client.call("status")
    except DaemonUnavailable as exc:
        return [f"summary: {played} rounds played; the table's meters are not available ({exc})"]
    finally:
        client.close()
    cur = Currency.from_dict(status.get("currency"))
    totals = meters.get("totals") or meters.get("table") or {}
    seats = meters.get("seats", {})
    settlements = sum(m.get("rounds", 0) for m in seats.values())
    wagered = sum(m.get("wagered", 0) for m in seats.values())
    return [
        f"summary: {played} round{'s' if played != 1 else ''} played: "
        f"{totals.get('rounds_settled', 0)} settled "
        f"({settlements} seat settlements), {totals.get('rounds_voided', 0)} voided",
        f"  wagered {cur.format(wagered)}; house result {cur.signed(totals.get('house_net', 0))}",
        f"  credits {credits_text(status.get('credits', {}), cur)}",
    ]
