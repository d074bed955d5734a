"""The table ``croupier watch`` and ``croupier ctl`` talk to when told of none: the one ``make demo`` runs.

Why read from its table file rather than fixed ports: the README's ``croupier watch`` and ``croupier ctl
recall 10`` follow ``make demo``, whose table (``baccarat_7seat_sim.yaml``) is not on the table files'
default ports (5556-5558, ``baccarat_sim.yaml``'s). The tools once defaulted to those and reached
nothing while the demo ran; reading the demo's own file keeps them on it (tests/test_demo_defaults.py
checks that the Makefile's demo runs this file).
"""

from __future__ import annotations

from typing import Final

from controller.daemon.config import FIRMWARE_CONFIGS, ZmqSpec, load_table

#: The table file ``make demo`` runs (the Makefile's ``demo`` target).
DEMO_TABLE: Final = FIRMWARE_CONFIGS / "tables" / "baccarat_7seat_sim.yaml"


def demo_zeromq() -> ZmqSpec:
    """The demo table's endpoints, read as ``--table`` reads them (:class:`TableFileError` if it is broken).

    Where the repository's ``firmware_configs`` is not installed beside the package there is no
    ``make demo``: the table files' defaults (``tcp://127.0.0.1:5556``..``5558``) are used.
    """
    if not DEMO_TABLE.exists():
        return ZmqSpec()
    return load_table(DEMO_TABLE).spec.zeromq
