#!/usr/bin/env python3
"""Generates the kiln.v1 Python protobuf/gRPC modules from proto/.

`generate(out_root)` writes out_root/kiln/v1/{*_pb2.py,*_pb2_grpc.py,*.pyi,
__init__.py}. Two callers share it:

- client_py/setup_venv.sh runs this file, which writes into the source tree
  (client_py/kiln/v1/, git-ignored) for the editable install; run it whenever
  a .proto file changes.
- client_py/setup.py (the package-build hook behind `pip install ./client_py`
  and `pip wheel ./client_py`) calls generate() into the build folder.

    python client_py/generate_protos.py
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
PROTO_ROOT = REPO / "proto"
OUT_DIR = HERE / "kiln" / "v1"

# What generate() writes into kiln/v1 (and what may be replaced there).
GENERATED_GLOBS = ("*_pb2.py", "*_pb2_grpc.py", "*_pb2.pyi", "__init__.py")


class GenerateError(RuntimeError):
    """The kiln.v1 modules could not be generated; the message says why."""


def proto_files(proto_root: pathlib.Path = PROTO_ROOT) -> list[str]:
    """The kiln/v1/*.proto files under proto_root, relative to it, sorted."""
    return sorted(str(p.relative_to(proto_root))
                  for p in (proto_root / "kiln" / "v1").glob("*.proto"))


def generate(out_root: pathlib.Path,
             proto_root: pathlib.Path = PROTO_ROOT) -> list[pathlib.Path]:
    """Generates kiln/v1 under out_root from proto_root/kiln/v1/*.proto.

    Returns the files written. Raises GenerateError when grpcio-tools is
    missing, there are no .proto files, or protoc fails.
    """
    out_root = pathlib.Path(out_root)
    proto_root = pathlib.Path(proto_root)
    try:
        from grpc_tools import protoc
        import grpc_tools
    except ImportError as e:
        raise GenerateError(
            "grpcio-tools is missing; pip install -r client_py/requirements.txt"
        ) from e

    protos = proto_files(proto_root)
    if not protos:
        raise GenerateError(f"no .proto files under {proto_root}/kiln/v1")
    out_dir = out_root / "kiln" / "v1"
    out_dir.mkdir(parents=True, exist_ok=True)
    # Stale modules of a removed .proto must not linger.
    for pattern in GENERATED_GLOBS:
        for old in out_dir.glob(pattern):
            old.unlink()
    well_known = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "grpc_tools.protoc",
        f"--proto_path={proto_root}",
        f"--proto_path={well_known}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *protos,
    ]
    rc = protoc.main(args)
    if rc != 0:
        raise GenerateError(f"protoc failed with exit code {rc}")
    init = out_dir / "__init__.py"
    init.write_text('"""Generated kiln.v1 protobuf and gRPC modules '
                    '(client_py/generate_protos.py). Do not edit."""\n')
    return sorted(p for pattern in GENERATED_GLOBS for p in out_dir.glob(pattern))


def main() -> int:
    try:
        generate(HERE)
    except GenerateError as e:
        print(f"generate_protos: {e}", file=sys.stderr)
        return 1
    print(f"generate_protos: {len(proto_files())} protos -> {OUT_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
