"""What devices count while running an executable (kiln.v1.DeviceCounters),
as the plain dicts ``CompiledModel.last_counters`` holds, and their sum over
the segments of a partitioned graph."""

from __future__ import annotations

import math
from typing import Any, Iterable

from kiln.v1 import tensor_pb2

__all__ = ["device_counters", "merge_counters"]


def device_counters(counters: tensor_pb2.DeviceCounters) -> dict[str, Any]:
    """``instructions`` and ``estimated_cycles`` (0 when the device does not
    count them), plus ``numeric_error`` when the device reported one."""
    out: dict[str, Any] = {"instructions": counters.instructions,
                           "estimated_cycles": counters.estimated_cycles}
    if counters.HasField("numeric_error"):
        e = counters.numeric_error
        out["numeric_error"] = {"numeric_type": e.numeric_type,
                                "max_abs_error": e.max_abs_error,
                                "max_abs_reference": e.max_abs_reference,
                                "rms_error": e.rms_error}
    return out


def merge_counters(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The counters of several executions (a partitioned graph's target
    segments) as one: instructions and cycles add up; the numeric error is
    the worst segment's maximum, the largest reference and the largest rms
    (segment sizes are not known, so no rms is averaged)."""
    merged: dict[str, Any] = {"instructions": 0, "estimated_cycles": 0}
    errors = []
    for part in parts:
        merged["instructions"] += part.get("instructions", 0)
        merged["estimated_cycles"] += part.get("estimated_cycles", 0)
        if part.get("numeric_error"):
            errors.append(part["numeric_error"])
    if errors:
        merged["numeric_error"] = {
            "numeric_type": ",".join(sorted({e["numeric_type"] for e in errors})),
            "max_abs_error": max(e["max_abs_error"] for e in errors),
            "max_abs_reference": max(e["max_abs_reference"] for e in errors),
            "rms_error": max((e["rms_error"] for e in errors), default=math.nan),
        }
    return merged
