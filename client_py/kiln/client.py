"""kiln.Client: compile models on a Kiln daemon and run them remotely.

The front door: a :class:`kiln.session.Session` (the connection, compiling
kiln.v1 graphs, running executables) that also takes models as PyTorch has
them (exported programs, fx graphs, TorchScript) and wires in the features a
compiled model can use: partitioned running (:mod:`kiln.partition`) and
verification (:mod:`kiln.verify`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import torch

from kiln.compiled import CompiledModel
from kiln.export import serialize_model
from kiln.graph import SerializedGraph
from kiln.partition import PartitionRunner
from kiln.placement import placement_policy
from kiln.session import DaemonInfo, DeviceInfo, Session
from kiln.v1 import compiler_pb2, graph_pb2, placement_pb2

__all__ = ["Client", "CompiledModel", "DeviceInfo", "DaemonInfo"]


class Client(Session):
    """A connection to one Kiln daemon (see :class:`kiln.session.Session`
    for the arguments: ``address``, ``timeout``, ``tls``, ``token``,
    ``local``, ``direct``, ``connect_timeout``)."""

    def __init__(self, address: str, timeout: float | None = 300.0, **kwargs: Any):
        super().__init__(address, timeout, **kwargs)
        self._runner = PartitionRunner(self)
        self.default_runner = self._runner
        self.default_verifier = self._verify

    def _verify(self, model: CompiledModel, flat: Sequence[Any],
                  outputs: Sequence[torch.Tensor]) -> Any:
        from kiln.verify import verify_execution
        return verify_execution(self, model, flat, outputs, options=model.options)

    def compile(self, model: Any, target: str = "cpu",
                options: compiler_pb2.CompileOptions | Mapping[str, Any] | None = None,
                name: str = "", verify: bool = False, fallback: str = "error",
                max_fallback_fraction: float | None = None) -> CompiledModel:
        """Compiles a model for ``target``.

        ``model`` is a ``torch.export.ExportedProgram`` (decomposed to core ATen
        here, with ``run_decompositions()``), a core-ATen ``torch.fx.GraphModule``
        whose placeholders carry ``meta["val"]`` (all placeholders are inputs,
        ``get_attr`` tensors are parameters), or a ``kiln.v1.Graph``. An
        ``nn.Module`` is an :class:`kiln.errors.InvalidArgumentError` whose
        hint says how to export it.

        With ``verify=True`` every call of the result compares its outputs
        with the reference interpreter (:mod:`kiln.reference`) and, on a
        mismatch, raises :class:`kiln.errors.VerificationError` naming the
        first diverging op (:mod:`kiln.verify`).

        ``fallback`` says what happens to ops the target cannot compile:
        ``"error"`` (default) raises :class:`kiln.errors.UnimplementedError`
        naming each of them; ``"cpu"`` partitions the graph so that they run
        on the host CPU with this process's PyTorch, between target segments
        (a WARNING on the ``kiln.placement`` logger says which and why; see
        ``model.placement``). ``max_fallback_fraction`` (with ``"cpu"``)
        caps the fraction of ops that may fall back; over it the compile
        raises :class:`kiln.errors.UnimplementedError`.

        ``options`` are CompileOptions (a message or a dict of its fields);
        ``dump_stages`` does not change the executable.
        """
        policy = placement_policy(fallback, max_fallback_fraction)
        if isinstance(model, graph_pb2.Graph):
            compiled = self.compile_graph(model, target=target, options=options,
                                          placement=policy)
        else:
            serialized, out_spec, in_spec = serialize_model(model, name)
            compiled = self.compile_serialized(serialized, target=target, options=options,
                                               out_spec=out_spec, in_spec=in_spec,
                                               placement=policy)
        compiled.verify = verify
        return compiled

    def compile_torchscript(self, path_or_module: Any, example_inputs: Sequence[Any],
                            target: str = "cpu",
                            options: compiler_pb2.CompileOptions | Mapping[str, Any] | None = None,
                            fallback: str = "error",
                            max_fallback_fraction: float | None = None) -> CompiledModel:
        """Compiles a TorchScript archive (a path, its bytes, or a scripted or
        traced module) for ``target``; the daemon converts it to a graph.

        ``example_inputs`` state forward()'s input types (TorchScript has no
        static shapes): tensors, ``kiln.v1.TensorType``s or ``(dtype, shape)``
        pairs. A returned (nested) tuple comes back as one flat tuple. Errors name
        the TorchScript node: :class:`kiln.errors.InvalidArgumentError` for an
        archive libtorch cannot read or inputs that do not fit,
        :class:`kiln.errors.UnimplementedError` for constructs Kiln cannot
        convert (control flow, non-tensor outputs); an op the compiler lacks
        fails, or falls back, as for any graph (``fallback``,
        ``max_fallback_fraction``: see :meth:`compile`).
        """
        from kiln.torchscript import compile_torchscript
        return compile_torchscript(self, path_or_module, example_inputs, target, options,
                                   placement_policy(fallback, max_fallback_fraction),
                                   runner=self._runner, verifier=self._verify)

    def segments(self, model: CompiledModel) -> list[CompiledModel | None]:
        """The target segments of a partitioned model as CompiledModels (None
        for CPU segments)."""
        return self._runner.segments(model)
