"""A BERT encoder in numpy, with the weights of an ONNX export of one.

The sentence models offered (all-MiniLM-L6-v2, bge-small-en-v1.5) are BERT encoders: embeddings
and a LayerNorm, then layers of self-attention and a GELU feed-forward block, each closed by a
residual LayerNorm. This module finds those weights in the model's ONNX graph (read by
:mod:`.onnx_file`) by what the graph does with them, not by the exporter's tensor names: each
linear layer is the matrix product whose result is added to a bias named
``encoder.layer.<i>.<role>.bias``, in whichever of the three forms the files hold:

- a float product whose weights are stored as int8 with a scale per output channel (``Cast`` then
  ``Mul`` back to float: the MiniLM file);
- an integer product of dynamically quantized activations (``DynamicQuantizeLinear``,
  ``MatMulInteger``: the bge file);
- plain float weights.

and runs the encoder with numpy, so no inference runtime is installed. Two ways to compute a linear
layer, as the graph does:

- ``float``: the weights dequantized to float32, float activations;
- ``int8``: each text's input to the layer quantized to uint8 with one scale and zero point for that
  text (``DynamicQuantizeLinear``'s formula), multiplied by the int8 weights, and the sum scaled
  back. The derivation ``dynamic_int8`` (:mod:`.derive`) first requantizes float or int8 weights per
  output channel (symmetric, [-127, 127]) and the embedding tables per tensor (asymmetric uint8), as
  onnxruntime's dynamic quantizer does.

The integer products are computed in float32 (numpy has no fast integer product): exact while a sum
stays below 2**24, within a float32 rounding of the exact sum beyond. ``tests/embedding`` compares
the vectors with onnxruntime's run of the same files (the test extra installs it as the oracle).

Texts are run in groups of equal length: no padding, so a text's vector is the same whatever else
is in the call, within a float32 rounding: numpy's matrix products are its BLAS library's, and
OpenBLAS's kernels for some CPUs (an AVX2 EPYC here) round a row's product by a last bit
differently with other rows beside it (a test checks the vectors agree within 1e-6).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .onnx_file import Graph, Node

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["BertEncoder", "GraphNotUnderstood"]

Activations = Literal["float", "int8"]

_ROLES = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)
_BIAS = re.compile(r"(?:^|\.)encoder\.layer\.(\d+)\.(" + "|".join(re.escape(r) for r in _ROLES) + r")\.bias$")
_DEFAULT_EPSILON = 1e-12  # BERT's LayerNorm epsilon (both offered exports use it)


class GraphNotUnderstood(ValueError):
    """The graph is not a BERT encoder in a form this module reads."""


@dataclass(frozen=True)
class _Linear:
    """``y = x @ weight (* scale) + bias``: ``weight`` holds float weights (``scale`` None) or the
    integer values of int8 weights as float32 (``scale``: one per output channel)."""

    weight: np.ndarray
    scale: np.ndarray | None
    bias: np.ndarray


@dataclass(frozen=True)
class _Table:
    """An embedding table as the file stores it: float rows (``scale`` None), or integer codes and
    the zero point and scale (per row or per table) that dequantize them. Rows are dequantized as
    they are gathered, so the vocabulary's table stays a quarter of its float size in memory."""

    codes: np.ndarray
    zero: np.ndarray | np.float32 | None = None
    scale: np.ndarray | np.float32 | None = None

    def rows(self, ids: np.ndarray) -> np.ndarray:
        import numpy as np

        if self.scale is None:
            out: np.ndarray = self.codes[ids]
            return out
        scale = self.scale[ids] if isinstance(self.scale, np.ndarray) and self.scale.ndim == 2 else self.scale
        values = self.codes[ids]
        if isinstance(self.zero, np.ndarray) and self.zero.dtype != np.float32:
            # (q - zero point) in integers first, as DequantizeLinear computes it
            dequantized: np.ndarray = (values.astype(np.int32) - self.zero).astype(np.float32) * scale
        else:
            dequantized = (values.astype(np.float32) - np.float32(self.zero or 0)) * scale
        return dequantized


@dataclass(frozen=True)
class _Layer:
    qkv: _Linear  # query, key and value side by side: one product for the three
    output: _Linear
    norm1: tuple[np.ndarray, np.ndarray]
    intermediate: _Linear
    final: _Linear
    norm2: tuple[np.ndarray, np.ndarray]


class BertEncoder:
    """The last hidden state of a BERT encoder for texts of equal token length."""

    def __init__(self, graph: Graph, *, heads: int, derive_int8: bool = False) -> None:
        import numpy as np

        weights = _Weights(graph)
        native_int8 = any(node.op_type == "MatMulInteger" for node in graph.nodes)
        self.activations: Activations = "int8" if native_int8 or derive_int8 else "float"
        self._word, self._position, self._token_type = (
            weights.embedding(kind, requantize=derive_int8)
            for kind in ("word_embeddings", "position_embeddings", "token_type_embeddings")
        )
        self._norm = weights.norm("embeddings.LayerNorm")
        self.dim = int(self._word.codes.shape[1])
        if self.dim % heads:
            raise GraphNotUnderstood(f"a hidden size of {self.dim} does not split into {heads} heads")
        self.heads = heads
        self.max_positions = int(self._position.codes.shape[0])
        self._epsilon = np.float32(weights.epsilon)
        self._layers = [self._layer(weights, i, derive_int8=derive_int8) for i in range(weights.layer_count)]

    def _layer(self, weights: _Weights, i: int, *, derive_int8: bool) -> _Layer:
        import numpy as np

        def linear(role: str) -> _Linear:
            return weights.linear(i, role, int8=self.activations == "int8", requantize=derive_int8)

        q, k, v = (linear(f"attention.self.{part}") for part in ("query", "key", "value"))
        scales = None if q.scale is None else np.concatenate([q.scale, k.scale, v.scale])
        qkv = _Linear(
            np.ascontiguousarray(np.concatenate([q.weight, k.weight, v.weight], axis=1)),
            scales,
            np.concatenate([q.bias, k.bias, v.bias]),
        )
        return _Layer(
            qkv=qkv,
            output=linear("attention.output.dense"),
            norm1=weights.norm(f"encoder.layer.{i}.attention.output.LayerNorm"),
            intermediate=linear("intermediate.dense"),
            final=linear("output.dense"),
            norm2=weights.norm(f"encoder.layer.{i}.output.LayerNorm"),
        )

    def hidden(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The last hidden state ``(texts, tokens, dim)`` of the token ids ``(texts, tokens)``."""
        import numpy as np

        texts, length = ids.shape
        x = self._word.rows(ids) + self._token_type.rows(np.zeros(1, dtype=np.int64))[0]
        x += self._position.rows(np.arange(length))
        x = self._layer_norm(x, self._norm)
        size = self.dim // self.heads
        scale = np.float32(1.0 / math.sqrt(size))
        for layer in self._layers:
            qkv = self._linear(x, layer.qkv).reshape(texts, length, 3, self.heads, size)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            scores = np.matmul(q, k)
            scores *= scale
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = np.matmul(scores, v).transpose(0, 2, 1, 3).reshape(texts, length, self.dim)
            x = self._layer_norm(self._linear(context, layer.output) + x, layer.norm1)
            inner = _gelu(self._linear(x, layer.intermediate))
            x = self._layer_norm(self._linear(inner, layer.final) + x, layer.norm2)
        return x

    def _linear(self, x: np.ndarray, linear: _Linear) -> np.ndarray:
        import numpy as np

        texts, length, width = x.shape
        if linear.scale is None:
            product: np.ndarray = (x.reshape(-1, width) @ linear.weight).reshape(texts, length, -1)
            product += linear.bias
            return product
        # DynamicQuantizeLinear over each text's tokens: uint8 with one scale and zero point.
        low = np.minimum(x.min(axis=(1, 2)), np.float32(0))
        high = np.maximum(x.max(axis=(1, 2)), np.float32(0))
        step = (high - low) / np.float32(255)
        step = np.where(step == 0, np.float32(1), step).astype(np.float32)
        zero = np.clip(np.rint(-low / step), 0, 255).astype(np.float32)
        q = np.rint(x / step[:, None, None])
        q += zero[:, None, None]
        np.clip(q, 0, 255, out=q)
        q -= zero[:, None, None]
        y: np.ndarray = (q.reshape(-1, width) @ linear.weight).reshape(texts, length, -1)
        y *= step[:, None, None] * linear.scale
        y += linear.bias
        return y

    def _layer_norm(self, x: np.ndarray, norm: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        import numpy as np

        centred: np.ndarray = x - x.mean(axis=-1, keepdims=True)
        variance = np.mean(np.square(centred), axis=-1, keepdims=True)
        centred /= np.sqrt(variance + self._epsilon)
        centred *= norm[0]
        centred += norm[1]
        return centred


def _gelu(x: np.ndarray) -> np.ndarray:
    """``x * (1 + erf(x / sqrt 2)) / 2``, erf by Abramowitz and Stegun 7.1.26 (error below 1.5e-7)."""
    import numpy as np

    z = x * np.float32(1 / math.sqrt(2))
    a = np.abs(z)
    t = np.float32(1) / (np.float32(1) + np.float32(0.3275911) * a)
    poly = t * (
        np.float32(0.254829592)
        + t
        * (
            np.float32(-0.284496736)
            + t * (np.float32(1.421413741) + t * (np.float32(-1.453152027) + t * np.float32(1.061405429)))
        )
    )
    erf = np.float32(1) - poly * np.exp(-a * a)
    erf = np.copysign(erf, z)
    out: np.ndarray = x * (np.float32(0.5) * (np.float32(1) + erf))
    return out


class _Weights:
    """The encoder's tensors, found in the graph."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.constants = graph.constants
        self.producer: dict[str, Node] = {out: node for node in graph.nodes for out in node.outputs}
        self.biases: dict[tuple[int, str], Node] = {}
        for node in graph.nodes:
            if node.op_type != "Add":
                continue
            for name in node.inputs:
                match = _BIAS.search(name) if name in self.constants else None
                if match:
                    self.biases[(int(match.group(1)), match.group(2))] = node
        layers = {i for i, _ in self.biases}
        self.layer_count = len(layers)
        if not layers or layers != set(range(self.layer_count)):
            raise GraphNotUnderstood("the graph has no numbered encoder layers")
        epsilons = {
            float(node.attributes["epsilon"])
            for node in graph.nodes
            if node.op_type == "LayerNormalization" and "epsilon" in node.attributes
        }
        self.epsilon = epsilons.pop() if len(epsilons) == 1 else _DEFAULT_EPSILON

    def _named(self, suffix: str) -> np.ndarray:
        found = [a for name, a in self.constants.items() if name == suffix or name.endswith("." + suffix)]
        if len(found) != 1:
            raise GraphNotUnderstood(f"the graph has {len(found)} tensors named {suffix!r}")
        return found[0]

    def norm(self, prefix: str) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        return (
            self._named(prefix + ".weight").astype(np.float32),
            self._named(prefix + ".bias").astype(np.float32),
        )

    def embedding(self, kind: str, *, requantize: bool) -> _Table:
        """The table of ``embeddings.<kind>``, as the graph dequantizes it (and, ``requantize``,
        requantized per tensor to uint8 as the dynamic quantizer stores a gathered table)."""
        import numpy as np

        base = f"embeddings.{kind}.weight"
        try:
            table = _Table(self._named(base).astype(np.float32))
        except GraphNotUnderstood:
            try:
                codes = self._named(base + "_q")
                table = _Table(codes, np.float32(0), self._named(base + "_scale").astype(np.float32))
            except GraphNotUnderstood:
                codes = self._named(base + "_quantized")
                zero = self._named(base + "_zero_point").astype(np.int32)
                scale = self._named(base + "_scale").astype(np.float32)
                table = _Table(codes, zero, scale)
        if not requantize:
            return table
        floats = table.rows(np.arange(table.codes.shape[0]))
        # The quantizer's arithmetic: the range in float32, the scale and zero point in float64.
        low = float(min(np.float32(0), floats.min()))
        high = float(max(np.float32(0), floats.max()))
        step = np.float32((high - low) / 255)
        zero_point = np.float32(np.clip(np.rint(-low / float(step)), 0, 255))
        quantized = np.clip(np.rint(floats / step) + zero_point, 0, 255).astype(np.uint8)
        return _Table(quantized, zero_point, step)

    def linear(self, layer: int, role: str, *, int8: bool, requantize: bool) -> _Linear:
        import numpy as np

        add = self.biases.get((layer, role))
        if add is None:
            raise GraphNotUnderstood(f"layer {layer} has no {role}")
        bias_name = next(n for n in add.inputs if n in self.constants and _BIAS.search(n))
        other = next(n for n in add.inputs if n != bias_name)
        bias = self.constants[bias_name].astype(np.float32)
        ints, scale, floats = self._product(other)
        if int8 and requantize:
            if floats is None:
                assert ints is not None and scale is not None
                floats = ints * scale
            step = (np.abs(floats).max(axis=0) / np.float32(127)).astype(np.float32)
            step = np.where(step == 0, np.float32(1), step).astype(np.float32)
            ints, scale = np.clip(np.rint(floats / step), -127, 127).astype(np.float32), step
        if int8:
            if ints is None or scale is None:
                raise GraphNotUnderstood(f"layer {layer}'s {role} has no int8 weights")
            return _Linear(np.ascontiguousarray(ints), scale.reshape(-1).astype(np.float32), bias)
        if floats is None:
            assert ints is not None and scale is not None
            floats = ints * scale
        return _Linear(np.ascontiguousarray(floats.astype(np.float32)), None, bias)

    def _product(self, name: str) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        """(integer weights as float32, their per-channel scale, float weights) of the product
        that gives ``name``; what the graph does not hold is None."""
        import numpy as np

        node = self.producer.get(name)
        if node is not None and node.op_type == "MatMul":
            weight = node.inputs[1]
            if weight in self.constants:
                return None, None, self.constants[weight].astype(np.float32)
            mul = self.producer.get(weight)
            if mul is not None and mul.op_type == "Mul":
                cast = next((self.producer.get(n) for n in mul.inputs if self.producer.get(n)), None)
                scale = next((self.constants[n] for n in mul.inputs if n in self.constants), None)
                if cast is not None and cast.op_type == "Cast" and scale is not None:
                    ints = self.constants.get(cast.inputs[0])
                    if ints is not None:
                        scale = scale.astype(np.float32)
                        return ints.astype(np.float32), scale, ints.astype(np.float32) * scale
        if node is not None and node.op_type == "Mul":
            # Mul(Cast(MatMulInteger(x_q, w_q, x_zero, w_zero)), Mul(x_scale, w_scale))
            for first, second in (node.inputs, node.inputs[::-1]):
                cast, scales = self.producer.get(first), self.producer.get(second)
                if cast is None or scales is None or cast.op_type != "Cast" or scales.op_type != "Mul":
                    continue
                product = self.producer.get(cast.inputs[0])
                if product is None or product.op_type != "MatMulInteger":
                    continue
                ints = self.constants.get(product.inputs[1])
                zero = self.constants.get(product.inputs[3]) if len(product.inputs) > 3 else None
                scale = next((self.constants[n] for n in scales.inputs if n in self.constants), None)
                if ints is None or scale is None:
                    continue
                values = ints.astype(np.int32) - (0 if zero is None else zero.astype(np.int32))
                return values.astype(np.float32), scale.astype(np.float32), None
        raise GraphNotUnderstood(f"{name!r} is not a matrix product with constant weights")
