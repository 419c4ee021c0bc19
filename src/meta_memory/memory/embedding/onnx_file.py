"""Reading an ONNX file without onnx: its graph's nodes and constant tensors, as numpy arrays.

An ONNX file is a protocol-buffer ``ModelProto``. This module reads the few fields a BERT encoder
needs (the graph's nodes with their inputs, outputs and attributes, and its initializers) straight
from the wire format: varints, fixed-width numbers and length-delimited fields. Tensors are read
from ``raw_data`` or the typed repeated fields; a tensor stored outside the file
(``data_location = EXTERNAL``) or of a type not listed in ``_DTYPES`` is refused. Anything
malformed raises :class:`OnnxFileError`, never reads past a field's bounds.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Graph", "Node", "OnnxFileError", "read_graph"]


class OnnxFileError(ValueError):
    """The bytes are not an ONNX model this reader can read."""


# TensorProto.DataType -> numpy dtype name
_DTYPES = {
    1: "float32",
    2: "uint8",
    3: "int8",
    6: "int32",
    7: "int64",
    9: "bool",
    10: "float16",
    11: "float64",
}


@dataclass
class Node:
    op_type: str
    inputs: list[str]
    outputs: list[str]
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class Graph:
    nodes: list[Node]
    constants: dict[str, np.ndarray]  # initializers and Constant nodes' values, by output name
    inputs: list[str]
    outputs: list[str]


def read_graph(data: bytes) -> Graph:
    """The graph of the serialized ``ModelProto`` ``data``.

    Raises:
        OnnxFileError: ``data`` is not a model this reader can read.
    """
    view = memoryview(data)
    graph_bytes = None
    for number, _, value in _fields(view, 0, len(view)):
        if number == 7:  # ModelProto.graph
            graph_bytes = value
    if graph_bytes is None:
        raise OnnxFileError("the file holds no graph")
    nodes: list[Node] = []
    constants: dict[str, np.ndarray] = {}
    inputs: list[str] = []
    outputs: list[str] = []
    for number, _, value in _fields(graph_bytes, 0, len(graph_bytes)):
        if number == 1:
            nodes.append(_node(value))
        elif number == 5:
            name, array = _tensor(value)
            constants[name] = array
        elif number == 11:
            inputs.append(_value_info_name(value))
        elif number == 12:
            outputs.append(_value_info_name(value))
    for node in nodes:
        if node.op_type == "Constant" and "value" in node.attributes and len(node.outputs) == 1:
            constants[node.outputs[0]] = node.attributes["value"]
    return Graph(nodes=nodes, constants=constants, inputs=inputs, outputs=outputs)


def _varint(buf: memoryview, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise OnnxFileError("a number runs past its field")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(buf: memoryview, pos: int, end: int) -> Any:
    """(field number, wire type, value) for each field of the message in ``buf[pos:end]``: an int
    for varints and fixed-width numbers (their raw bits), a memoryview for length-delimited ones."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos, end)
            yield number, wire, value
        elif wire == 1 or wire == 5:
            width = 8 if wire == 1 else 4
            if pos + width > end:
                raise OnnxFileError("a fixed-width number runs past its message")
            yield number, wire, int.from_bytes(buf[pos : pos + width], "little")
            pos += width
        elif wire == 2:
            length, pos = _varint(buf, pos, end)
            if pos + length > end:
                raise OnnxFileError("a field runs past its message")
            yield number, wire, buf[pos : pos + length]
            pos += length
        else:
            raise OnnxFileError(f"unsupported wire type {wire}")


def _text(value: Any) -> str:
    if not isinstance(value, memoryview):
        raise OnnxFileError("a name is not a string")
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OnnxFileError("a name is not UTF-8") from exc


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _varints(wire: int, value: Any) -> list[int]:
    """A repeated int64 field's values from one occurrence: packed (a run of varints) or not."""
    if wire == 0:
        return [_signed(value)]
    out = []
    pos, end = 0, len(value)
    while pos < end:
        number, pos = _varint(value, pos, end)
        out.append(_signed(number))
    return out


def _value_info_name(buf: memoryview) -> str:
    for number, _, value in _fields(buf, 0, len(buf)):
        if number == 1:
            return _text(value)
    return ""


def _node(buf: memoryview) -> Node:
    node = Node(op_type="", inputs=[], outputs=[])
    for number, _, value in _fields(buf, 0, len(buf)):
        if number == 1:
            node.inputs.append(_text(value))
        elif number == 2:
            node.outputs.append(_text(value))
        elif number == 4:
            node.op_type = _text(value)
        elif number == 5:
            name, attribute = _attribute(value)
            node.attributes[name] = attribute
    return node


def _attribute(buf: memoryview) -> tuple[str, Any]:
    name, value_out = "", None
    ints: list[int] = []
    floats: list[float] = []
    for number, wire, value in _fields(buf, 0, len(buf)):
        if number == 1:
            name = _text(value)
        elif number == 2 and wire == 5:
            value_out = struct.unpack("<f", value.to_bytes(4, "little"))[0]
        elif number == 3 and wire == 0:
            value_out = _signed(value)
        elif number == 4:
            value_out = bytes(value)
        elif number == 5:
            value_out = _tensor(value)[1]
        elif number == 7:
            if wire == 5:
                floats.append(struct.unpack("<f", value.to_bytes(4, "little"))[0])
            else:
                floats.extend(struct.unpack(f"<{len(value) // 4}f", value[: len(value) // 4 * 4]))
        elif number == 8:
            ints.extend(_varints(wire, value))
    if value_out is None and (ints or floats):
        value_out = ints or floats
    return name, value_out


def _tensor(buf: memoryview) -> tuple[str, np.ndarray]:
    import numpy as np

    name = ""
    dims: list[int] = []
    data_type = 0
    raw: memoryview | None = None
    floats: list[bytes] = []
    ints: list[int] = []
    for number, wire, value in _fields(buf, 0, len(buf)):
        if number == 1:
            dims.extend(_varints(wire, value))
        elif number == 2:
            data_type = value
        elif number == 4:
            floats.append(bytes(value) if wire == 2 else value.to_bytes(4, "little"))
        elif number in (5, 7):
            ints.extend(_varints(wire, value))
        elif number == 8:
            name = _text(value)
        elif number == 9:
            raw = value
        elif number == 14 and value == 1:
            raise OnnxFileError(f"tensor {name!r} is stored outside the file")
    dtype_name = _DTYPES.get(data_type)
    if dtype_name is None:
        raise OnnxFileError(f"tensor {name!r} has unsupported data type {data_type}")
    dtype = np.dtype(dtype_name).newbyteorder("<")
    count = 1
    for dim in dims:
        if dim < 0:
            raise OnnxFileError(f"tensor {name!r} has a negative dimension")
        count *= dim
    if raw is not None:
        if len(raw) != count * dtype.itemsize:
            raise OnnxFileError(f"tensor {name!r} holds {len(raw)} bytes, not {count * dtype.itemsize}")
        array = np.frombuffer(raw, dtype=dtype).copy()
    elif floats:
        array = np.frombuffer(b"".join(floats), dtype=np.dtype("<f4")).copy()
    else:
        array = np.array(ints, dtype=np.int64).astype(dtype)
    if array.size != count:
        raise OnnxFileError(f"tensor {name!r} holds {array.size} values, not {count}")
    return name, array.astype(dtype.newbyteorder("="), copy=False).reshape(dims)
