"""Package-build hook: generates kiln.v1 (protobuf/gRPC modules and .pyi
stubs) from ../proto while the package is built, so `pip install ./client_py`
and `pip wheel ./client_py` work from a clean checkout. Everything else is
declared in pyproject.toml.

- wheel: the modules are generated into the build folder (not the source tree).
- editable install (client_py/setup_venv.sh): into client_py/kiln/v1/, which
  the editable install imports from (git-ignored).
- sdist: into the sdist, which has no proto/; a build from it uses those.

Without ../proto and without generated modules in kiln/v1 the build fails.
"""

import pathlib
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate_protos  # noqa: E402  (client_py/generate_protos.py)

PROTO_ROOT = HERE.parent / "proto"


def _have_protos() -> bool:
    return bool(generate_protos.proto_files(PROTO_ROOT)) if PROTO_ROOT.is_dir() else False


def _have_stubs(root: pathlib.Path) -> bool:
    v1 = root / "kiln" / "v1"
    return (v1 / "__init__.py").is_file() and any(v1.glob("*_pb2.py"))


def _generate(out_root: pathlib.Path) -> None:
    try:
        files = generate_protos.generate(out_root, PROTO_ROOT)
    except generate_protos.GenerateError as e:
        sys.exit(f"kiln: cannot generate kiln.v1 from {PROTO_ROOT}: {e}")
    print(f"kiln: generated {len(files)} kiln.v1 files from {PROTO_ROOT} "
          f"into {out_root / 'kiln' / 'v1'}")


def _missing_protos() -> str:
    return (f"kiln: no .proto files at {PROTO_ROOT}/kiln/v1 and no generated "
            f"kiln.v1 modules in {HERE / 'kiln' / 'v1'}. Build the package "
            "from a Kiln checkout (client_py/ next to proto/), e.g. "
            "`pip install ./client_py` from the repository root, or from an "
            "sdist made by one.")


class BuildPyWithProtos(build_py):
    def check_package(self, package, package_dir):
        # kiln/v1 is absent from a clean checkout until run() generates it.
        if package == "kiln.v1" and not pathlib.Path(package_dir).is_dir():
            return None
        return super().check_package(package, package_dir)

    def run(self):
        if self.editable_mode:
            # The editable install imports kiln/v1 from the source tree.
            if _have_protos():
                _generate(HERE)
            elif not _have_stubs(HERE):
                sys.exit(_missing_protos())
            super().run()
            return
        super().run()  # copies kiln/ (and kiln/v1/ if present, e.g. an sdist)
        if _have_protos():
            # Fresh from proto/: replaces any copies of stale source-tree stubs.
            _generate(pathlib.Path(self.build_lib))
        elif not _have_stubs(pathlib.Path(self.build_lib)):
            sys.exit(_missing_protos())


class SdistWithProtos(sdist):
    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        if _have_protos():
            _generate(pathlib.Path(base_dir))
        elif not _have_stubs(pathlib.Path(base_dir)):
            sys.exit(_missing_protos())


setup(cmdclass={"build_py": BuildPyWithProtos, "sdist": SdistWithProtos})
