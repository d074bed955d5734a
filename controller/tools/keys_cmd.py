"""``croupier keys``: a table's CurveZMQ keys (docs/security.md).

``croupier keys new NAME --role operator --table FILE`` makes a client key
pair, authorises its public key on that table with that role and prints
where the secret is (hand that folder to the operator; ``croupier ctl --key
FILE`` or ``CROUPIER_KEY=FILE`` uses it). ``croupier keys list --table FILE``
shows the authorised keys; ``croupier keys server --table FILE`` makes the
table's server pair (the daemon also makes it on first start), or replaces an
unusable one (empty, corrupt: said loudly, since every client then needs the new
public key; the daemon itself never replaces a secret it cannot read).

No secret has to travel: ``croupier keys request NAME`` on the operator's own
machine makes a pair there and prints its public key; ``croupier keys authorize
NAME.key --name NAME --role ROLE --table FILE`` on the table's machine admits
that public file (the same authorisation ``keys new`` ends with). Authorising
the same key again answers as the first time; another key under a taken name
is refused.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from controller.daemon.config import TableFileError, load_table
from controller.daemon.keys import ROLES, KeyFileError, KeyFolder, load_pair, replaced_advice, request_pair
from controller.tools.children import croupier_command


def _folder(args: argparse.Namespace) -> KeyFolder:
    if args.keys is not None:
        return KeyFolder(Path(args.keys))
    if not args.table:
        if args.state_dir is not None:  # the table file may name another folder (security.keys)
            raise KeyFileError(f"--state-dir is read with --table FILE (whose security.keys may name another "
                               f"folder); without one, give --keys {args.state_dir / 'keys'}")
        raise KeyFileError("give --table FILE (its key folder) or --keys DIR")
    return KeyFolder(load_table(args.table).key_folder(args.state_dir))


def _handed_over(path: Path) -> bytes:
    """The public key in a file an operator handed over; a file that is not one, or that holds a
    secret (which should never have left the operator's machine), is refused naming it."""
    if not path.is_file():
        raise KeyFileError(f"{path}: no such file (the NAME.key that `croupier keys request` made)")
    public, secret = load_pair(path)
    if secret is not None:
        raise KeyFileError(f"{path}: holds a secret key: hand over only the public file (NAME.key from "
                           "`croupier keys request`); the secret stays on the operator's machine")
    return public


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    new = sub.add_parser("new", help="make a client key pair and authorise it with a role")
    new.add_argument("name", help="the key's name: journaled with every command it sends")
    new.add_argument("--role", required=True, choices=ROLES,
                     help="observer: status, meters, recall, snapshot, ping; cashier: also credit in/out; "
                          "operator: all")
    new.add_argument("--out", type=Path, help="folder for the secret (default: the key folder's clients/)")
    request = sub.add_parser("request", help="on your own machine: make your key pair and print the "
                             "public key to hand to the table's admin")
    request.add_argument("name", help="your key's name (the admin authorises it under this name)")
    request.add_argument("--out", type=Path, default=Path.home() / "croupier-keys",
                         help="folder for your pair (default: ~/croupier-keys)")
    authorize = sub.add_parser("authorize", help="admit an operator's public key file with a role")
    authorize.add_argument("public_file", type=Path, metavar="PUBLIC_KEY_FILE",
                           help="the NAME.key that `croupier keys request` made")
    authorize.add_argument("--name", required=True,
                           help="the key's name: journaled with every command it sends")
    authorize.add_argument("--role", required=True, choices=ROLES, help="as for `keys new`")
    listing = sub.add_parser("list", help="the authorised keys and their roles")
    server = sub.add_parser("server", help="make the table's server key pair if it has none, "
                            "or replace an unusable one")
    for p in (new, authorize, listing, server):
        p.add_argument("--table", default=os.environ.get("CROUPIER_TABLE"),
                       help="table file (default $CROUPIER_TABLE); its security.keys folder is used")
        p.add_argument("--state-dir", type=Path,
                       help="with --table: the state dir the daemon runs with (its --state-dir), whose keys/ "
                            "folder is used unless the table file names one")
        p.add_argument("--keys", help="the key folder itself (instead of --table)")


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "request":
            return _request(args.out, args.name)
        folder = _folder(args)
        if args.action == "authorize":
            folder.authorize(args.name, args.role, _handed_over(args.public_file))
            print(f"key {args.name!r} ({args.role}) authorised in {folder.authorized}")
            print(f"give {args.name} the table's public key {folder.server_public_file}, to put beside "
                  f"{args.name}.key_secret as server.key")
        elif args.action == "server":
            problem = folder.server_secret_problem()
            if problem is not None:
                folder.replace_server_pair()
            outcome = "replaced" if problem is not None else folder.ensure_server()
            if outcome == "replaced":
                why = problem or "its replacement was cut short (the public key beside it was the old one)"
                print(f"croupier keys: THE SERVER KEY WAS REPLACED: {why}.\n{replaced_advice(folder)}",
                      file=sys.stderr)
            print(f"{outcome} {folder.server_public_file}")
        elif args.action == "list":
            for info in sorted(folder.load_authorized().values(), key=lambda k: k.name):
                print(f"{info.name:<24} {info.role:<9} {info.public.decode()}")
        else:
            secret = folder.new_client(args.name, args.role, args.out)
            print(f"key {args.name!r} ({args.role}) authorised in {folder.authorized}")
            print(f"secret: {secret} (0600; the server's public key is beside it)")
            print(f"use it: {croupier_command()} ctl --key {secret} ...   or   export CROUPIER_KEY={secret}")
    except (KeyFileError, TableFileError) as exc:
        print(f"croupier keys: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder not writable by this user (run as the table's admin), a full disk
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"croupier keys: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


def _request(out: Path, name: str) -> int:
    public_file, public, made = request_pair(out, name)
    print(f"{'made' if made else 'kept'} key {name!r}: public key {public.decode()}")
    print(f"hand over {public_file} (public); the secret {out / (name + '.key_secret')} (0600) stays here")
    print(f"the table's admin runs: croupier keys authorize {public_file.name} --name {name} --role ROLE "
          "--table TABLE_FILE")
    print(f"then put the table's server.key in {out}, and: {croupier_command()} ctl --table TABLE_FILE "
          f"--key {out / (name + '.key_secret')} status")
    return 0
