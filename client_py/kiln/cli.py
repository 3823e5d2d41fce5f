"""``kiln``: the command line of Kiln.

    kiln devices
    kiln compile MODEL.pt2 --target cpu [--dump DIR] [--op-report [--exact]]
    kiln run MODEL.pt2 --input x.pt [--input y.pt ...] [--output out.pt] [--compare]
    kiln cache stats | gc [--target-bytes 10GiB] | salt NEW | why MODEL.pt2 [--target T]
    kiln token new --name NAME [--role user|admin|agent]
    kiln --version

``--address`` (default ``$KILN_ADDRESS`` or localhost:50051); ``--tls-ca``,
``--tls-cert``, ``--tls-key`` and ``--token-file`` (defaults from
``KILN_TLS_CA``, ``KILN_TLS_CERT``, ``KILN_TLS_KEY``, ``KILN_TOKEN`` and
``KILN_TOKEN_FILE``; see :mod:`kiln.credentials`). Expected errors
(an unreachable daemon, a missing file, a rejected graph) print one line and a
hint on stderr and exit 1; a traceback means a bug in kiln.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import sys
from typing import Sequence

from kiln.cli_format import CliError, describe_error, parse_size
from kiln.credentials import TOKEN_ROLES
from kiln.errors import KilnError, UnimplementedError

__all__ = ["main", "build_parser", "DEFAULT_ADDRESS"]

DEFAULT_ADDRESS = "localhost:50051"


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_compile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=pathlib.Path, help="torch.export archive (.pt2)")
    p.add_argument("--target", "-t", default="cpu",
                   help="target device kind, as `kiln devices` lists (default: cpu)")
    p.add_argument("--opt-level", type=int, default=0, choices=range(0, 4),
                   help="LLVM optimisation level; 0 = the daemon's default (2)")
    p.add_argument("--cpu", default="",
                   help="cpu target: the CPU to compile for (an LLVM CPU name, or "
                        "'native'); default: the one the connected agents share")
    p.add_argument("--cpu-features", default="",
                   help="cpu target: features on top of --cpu, e.g. +avx512f,-fma")
    p.add_argument("--convolution-algorithm", default="", choices=("", "auto", "direct"),
                   help="cpu target: how the kernel library may compute convolutions: "
                        "auto (the default: the agent's fastest, Winograd for 3x3 "
                        "stride-1 ones on AVX-512) or direct")
    p.add_argument("--fallback", choices=("error", "cpu"), default="error",
                   help="ops the target lacks: fail (default), or run them on the host "
                        "CPU with PyTorch between target segments")
    p.add_argument("--max-fallback-fraction", type=float, metavar="F",
                   help="with --fallback cpu: fail when more than this fraction (0..1) "
                        "of the ops would fall back")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                   help="import this Python module before loading the archive: one that "
                        "registers (torch.library) custom ops the archive calls; repeatable")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kiln", description="Compile and run PyTorch models on a Kiln daemon.")
    parser.add_argument("--address", "-a", default=os.environ.get("KILN_ADDRESS", DEFAULT_ADDRESS),
                        help="kilnd host:port (default: $KILN_ADDRESS or %(default)s)")
    parser.add_argument("--tls-ca", type=pathlib.Path, metavar="PEM",
                        help="CA bundle kilnd's certificate chains to; turns TLS on "
                             "(default: $KILN_TLS_CA; unset: plaintext)")
    parser.add_argument("--tls-cert", type=pathlib.Path, metavar="PEM",
                        help="client certificate for mTLS (default: $KILN_TLS_CERT)")
    parser.add_argument("--tls-key", type=pathlib.Path, metavar="PEM",
                        help="its private key (default: $KILN_TLS_KEY)")
    parser.add_argument("--token-file", type=pathlib.Path, metavar="FILE",
                        help="file holding a bearer token (default: $KILN_TOKEN, "
                             "$KILN_TOKEN_FILE)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="deadline per RPC in seconds (default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars (they show only on a terminal anyway)")
    parser.add_argument("--version", action="store_true",
                        help="print the client's version and, when a kilnd answers at "
                             "--address, the daemon's; then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("devices", help="list the devices the agents registered")
    p.add_argument("--kind", help="only devices of this kind")

    p = sub.add_parser("compile", help="compile a .pt2 and print the executable digest")
    _add_compile_args(p)
    p.add_argument("--dump", type=pathlib.Path, metavar="DIR",
                   help="write the module after every compiler stage (aten, linalg, "
                        "llvm-dialect, llvm-ir, asm), graph.pb, manifest.textproto, "
                        "op-report.txt and compile.json to DIR")
    p.add_argument("--op-report", action="store_true",
                   help="print the op report: per layer MACs, FLOPs, parameter and "
                        "activation bytes, reads and writes, and totals")
    p.add_argument("--exact", action="store_true",
                   help="with --op-report: exact numbers instead of K/M/G and KiB/MiB")

    p = sub.add_parser("run", help="compile a .pt2, run it on inputs, print/save outputs")
    _add_compile_args(p)
    p.add_argument("--input", "-i", type=pathlib.Path, action="append", default=[],
                   metavar="FILE", help="a torch.save'd tensor (or tuple), or .npy; repeat in order")
    p.add_argument("--output", "-o", type=pathlib.Path, metavar="FILE",
                   help="torch.save the outputs here")
    p.add_argument("--compare", action="store_true",
                   help="also run the program eagerly and print the largest difference")

    cache = sub.add_parser("cache", help="the daemon's store and compile cache")
    csub = cache.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    csub.add_parser("stats", help="sizes, hit counts, the salt")
    p = csub.add_parser("gc", help="evict least-recently-used blobs")
    p.add_argument("--target-bytes", type=_size, default=0, metavar="N",
                   help="evict down to N bytes (512M, 2GiB...); default: the daemon's capacity")
    p = csub.add_parser("salt", help="change the compile-key salt (invalidates every executable)")
    p.add_argument("salt", help="the new salt")
    p = csub.add_parser("why", help="why compiling MODEL would miss: the nearest cached keys "
                                    "of the same graph and what differs")
    _add_compile_args(p)
    p.add_argument("--candidates", type=int, default=3, metavar="N",
                   help="nearest cached keys to show (default: %(default)s)")

    token = sub.add_parser("token", help="bearer tokens for kilnd's --auth-tokens file")
    tsub = token.add_subparsers(dest="token_command", required=True, metavar="ACTION")
    p = tsub.add_parser("new", help="print a fresh token, and the line kilnd's --auth-tokens "
                                    "file needs for it (kilnd keeps only its hash)")
    p.add_argument("--name", required=True, help="who the token is for (logged by kilnd)")
    p.add_argument("--role", choices=TOKEN_ROLES, default="user",
                   help="user: compile, run, blobs, devices; admin: also cache GC and "
                        "salt; agent: the agent plane (default: %(default)s)")
    return parser


def _client_credentials(args: argparse.Namespace) -> dict:
    """Client(tls=..., token=...) from the flags; None defers to the environment."""
    from kiln.credentials import TlsConfig, resolve_tls
    if args.tls_cert is not None and args.tls_key is None or \
            args.tls_key is not None and args.tls_cert is None:
        raise CliError("--tls-cert and --tls-key go together",
                       "give both, or neither")
    tls = None
    if args.tls_ca is not None:
        tls = TlsConfig(ca=args.tls_ca, cert=args.tls_cert, key=args.tls_key)
    elif args.tls_cert is not None:
        # The environment's TLS settings (CA, server name), with the flags'
        # certificate.
        from_env = resolve_tls(None) if os.environ.get("KILN_TLS_CA") else None
        if from_env is None:
            raise CliError("--tls-cert needs --tls-ca (or KILN_TLS_CA)",
                           "name the CA bundle kilnd's certificate chains to")
        tls = dataclasses.replace(from_env, cert=args.tls_cert, key=args.tls_key)
    token = None
    if args.token_file is not None:
        try:
            token = args.token_file.read_text().strip()
        except OSError as err:
            raise CliError(f"cannot read --token-file {args.token_file}: {err.strerror}",
                           "") from None
        if not token:
            raise CliError(f"--token-file {args.token_file} is empty", "")
    return {"tls": tls, "token": token}


def _command(args: argparse.Namespace):
    from kiln import cli_commands as c
    if args.command == "cache":
        return {"stats": c.cmd_cache_stats, "gc": c.cmd_cache_gc,
                "salt": c.cmd_cache_salt, "why": c.cmd_cache_why}[args.cache_command]
    return {"devices": c.cmd_devices, "compile": c.cmd_compile, "run": c.cmd_run}[args.command]


def _print_version(args: argparse.Namespace) -> None:
    """``kiln --version``: the client's version and torch's, then the
    daemon's when one answers within a few seconds."""
    import torch

    from kiln.client import Client
    from kiln.version import __version__
    print(f"kiln {__version__} (torch {torch.__version__})")
    try:
        with Client(args.address, timeout=5.0, connect_timeout=2.0,
                    **_client_credentials(args)) as client:
            info = client.daemon_info()
        print(f"kilnd {info.version} at {args.address} (compiler {info.compiler_build_id})")
    except UnimplementedError:
        print(f"kilnd at {args.address} is older than {__version__} (it has no "
              "kiln.v1.Daemon/GetInfo): upgrade it")
    except KilnError as err:
        print(f"kilnd: no answer at {args.address} ({err.details})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        _print_version(args)
        return 0
    if args.command is None:
        parser.error("a COMMAND is required (or --version)")
    try:
        from kiln.cli_progress import Reporter
        from kiln.client import Client
        if args.command == "token":
            from kiln import cli_commands as c
            c.cmd_token_new(args)
            return 0
        reporter = Reporter(enabled=False if args.no_progress else None)
        with Client(args.address, timeout=args.timeout, **_client_credentials(args)) as client:
            _command(args)(args, client, reporter)
    except (KilnError, CliError) as err:
        message, hint = describe_error(err)
        print(f"kiln: error: {message}", file=sys.stderr)
        if hint:
            print(f"hint: {hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kiln: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`kiln compile ... | head`): stop quietly, and
        # keep the interpreter's final flush from failing again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
