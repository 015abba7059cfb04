#!/usr/bin/python3
"""The GEMMs of an ONNX model, in pe-vp's convention, as JSON: what `pe-vp sweep` runs for an `onnx = "..."` workload.

    /usr/bin/python3 scripts/onnx_gemms.py MODEL.onnx [--batch N] [--workload]

Parses the model with Debian's python3-onnx (weights kept in external data files are not read: only shapes count),
gives every graph input's dynamic batch dimension (dimension 0) the value N, runs onnx.shape_inference.infer_shapes
for the intermediate shapes and lowers every Conv, Gemm and MatMul node (and their integer and quantized forms) to
one pe-vp GEMM C[m,n] = A[m,k] @ B[k,n], A stationary (m on the array's columns, k on its rows), B streamed (n), run
`count` times. docs/sweeps.md ("ONNX models") says how each op is lowered and D-ONNX-LOWERING why.

Output (stdout, exit status 0):
    {"format": "pevp-onnx-gemms-1", "model": PATH, "batch": N or null, "opset": V, "nodes": NODES,
     "gemms": [{"node": NAME, "op": OP, "m": M, "k": K, "n": N, "count": C, "dtype": "float32" or null}, ...],
     "ignored": [{"op": OP, "count": C}, ...]}
one entry per lowered node in graph order; `batch` is null when no graph input has a dynamic dimension 0 (the
model's sizes are all its own); `ignored` counts the other nodes by op (most frequent first), so a reader
knows what was not modelled. A refused model: a message naming the model, the node and the rule on stderr, exit
status 2. python3-onnx missing: exit status 3. With --workload the GEMMs are printed as a sweep spec's `gemms`
workload instead, {"name": ..., "gemms": [{"name", "m", "k", "n", "count"}, ...]}, one per node, to edit or to paste
into a JSON spec's workload list.
"""

import argparse
import json
import math
import os
import re
import stat
import sys

EXIT_REFUSED = 2
EXIT_NO_ONNX = 3

# protobuf refuses to parse a message of 2 GiB or more; larger models keep their weights in external data files.
MAX_MODEL_BYTES = (2 << 30) - 1

FORMAT = "pevp-onnx-gemms-1"


class Refused(Exception):
    """A model pe-vp cannot lower; the message names the node (or input) and the rule."""


def node_label(node, index):
    if node.name:
        return "node '%s' (%s)" % (node.name, node.op_type)
    return "node #%d (%s, unnamed)" % (index, node.op_type)


def layer_name(node, index):
    return node.name if node.name else "%s_%d" % (node.op_type, index)


# ----------------------------------------------------------------------------------------------------------------
# Reading the model

def load_model(onnx, path):
    if os.path.isdir(path):
        raise Refused("is a directory")
    try:
        # A model is a file: a device or FIFO (a link to /dev/zero) would be read up to the limit into memory.
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise Refused("not a regular file (a model is read from a file)")
        size = os.path.getsize(path)
        if size > MAX_MODEL_BYTES:
            raise Refused("larger than 2 GiB, protobuf's limit for one ONNX file (keep the weights in external data)")
        with open(path, "rb") as f:
            data = f.read(MAX_MODEL_BYTES + 1)
    except OSError as e:
        raise Refused("cannot open: %s" % (e.strerror or e))
    if len(data) > MAX_MODEL_BYTES:
        raise Refused("larger than 2 GiB, protobuf's limit for one ONNX file (keep the weights in external data)")
    if not data:
        raise Refused("not an ONNX model: the file is empty")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as e:  # google.protobuf.message.DecodeError, or a RuntimeWarning-turned error of the C parser
        raise Refused("not an ONNX model: protobuf cannot parse it (%s): a truncated or foreign file" % e)
    # A protobuf parser accepts many byte strings that are no model (text, another message): a model has an IR
    # version and a graph with nodes.
    if model.ir_version <= 0 or not model.HasField("graph"):
        raise Refused("not an ONNX model: no IR version or no graph (a truncated or foreign file)")
    if not model.graph.node:
        raise Refused("the graph has no node")
    # The checker finds a tensor's external data file relative to the working folder: the model's own folder, where
    # the exporter put them. (It checks that they are there; their contents are not read.)
    here = os.getcwd()
    try:
        os.chdir(os.path.dirname(os.path.abspath(path)))
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        raise Refused("not a valid ONNX model: %s" % checker_message(str(e)))
    finally:
        os.chdir(here)
    return model


def checker_message(text):
    """The checker's message on one line, its node first: it ends "==> Context: Bad node spec for node. Name: c1
    OpType: Conv" under the reason."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    reason = [line for line in lines if not line.startswith("==> Context:")]
    context = re.search(r"Name: (.*) OpType: (\S+)", text)
    prefix = "node '%s' (%s): " % (context.group(1), context.group(2)) if context else ""
    return prefix + " ".join(reason or lines)


def inference_message(text):
    """Shape inference's message on one line, its node first: "[ShapeInferenceError] (op_type:Conv, node name: c1):
    [ShapeInferenceError] Inferred shape and existing shape differ in dimension 2: (6) vs (8)"."""
    text = " ".join(text.replace("[ShapeInferenceError]", "").split())
    context = re.match(r"\(op_type:(\S+), node name: ([^)]*)\):\s*(.*)", text)
    return "node '%s' (%s): %s" % (context.group(2), context.group(1), context.group(3)) if context else text


def default_opset(model):
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            return opset.version
    return None


def tensor_dims(type_proto):
    """The dims of a tensor type: a list of int (known) or str (dynamic: its name, or '?'), or None without a shape."""
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    dims = []
    for d in type_proto.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append("?")
    return dims


def set_batch(model, batch):
    """Gives every graph input's dynamic dimension 0 the batch (1 unless given) and refuses every other dynamic
    dimension. A fixed dimension 0 is the model's own (a batch it was exported with, or no batch at all: a shape, a
    table) and is left as it is. Returns the batch in effect, or None when no input has a dynamic dimension 0."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]  # IR < 4 lists initializers as inputs
    batched = []
    for value in inputs:
        dims = tensor_dims(value.type)
        if not dims:
            continue
        for axis, dim in enumerate(dims[1:], start=1):
            if not isinstance(dim, int) or dim <= 0:
                raise Refused("graph input '%s'%s: dimension %d (%s) is dynamic; only the batch, dimension 0, may be: "
                              "export the model with fixed sizes" % (value.name, readers(model, value.name), axis,
                                                                     describe_dim(dim)))
        if not (isinstance(dims[0], int) and dims[0] > 0):
            batched.append(value)
    if not batched:
        if batch is not None:
            raise Refused("batch = %d, but no graph input has a dynamic dimension 0 (the model's sizes are fixed: "
                          "export it with a dynamic batch axis)" % batch)
        return None
    effective = 1 if batch is None else batch
    for value in batched:
        d = value.type.tensor_type.shape.dim[0]
        d.Clear()
        d.dim_value = effective
    return effective


def readers(model, name):
    """ " (read by node 'proj' (MatMul))": where a graph input goes, for a message about it."""
    for index, node in enumerate(model.graph.node):
        if name in node.input:
            return " (read by %s)" % node_label(node, index)
    return ""


def describe_dim(dim):
    if isinstance(dim, int):
        return str(dim)
    return "unnamed" if dim == "?" else "'%s'" % dim


def infer_shapes(onnx, model):
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception as e:  # a contradiction shape inference cannot get past even in its lenient mode
        raise Refused("shape inference failed: %s" % inference_message(str(e)))


class Shapes:
    """What the graph knows of every tensor: dims, element type, whether it is a constant, where it comes from."""

    def __init__(self, model):
        graph = model.graph
        self.types = {}
        self.constants = set()
        self.graph_inputs = set()
        for t in graph.initializer:
            self.types[t.name] = (list(t.dims), t.data_type)
            self.constants.add(t.name)
        for value in list(graph.input) + list(graph.value_info) + list(graph.output):
            if value.name in self.types and value.name in self.constants:
                continue  # an initializer's own dims are authoritative
            dims = tensor_dims(value.type)
            elem = value.type.tensor_type.elem_type if value.type.HasField("tensor_type") else 0
            if dims is not None or value.name not in self.types:
                self.types[value.name] = (dims, elem)
        for value in graph.input:
            if value.name not in self.constants:
                self.graph_inputs.add(value.name)
        # A constant is an initializer, a Constant's output, or what a node computes from constants alone (a
        # quantized weight's DequantizeLinear, a weight's Transpose). The nodes are in topological order (ONNX
        # requires it), so one pass finds them all.
        for node in graph.node:
            inputs = [i for i in node.input if i]
            if (node.op_type == "Constant" and node.domain in ("", "ai.onnx")) or (
                    inputs and all(i in self.constants for i in inputs)):
                self.constants.update(o for o in node.output if o)

    def dims(self, name, what, label):
        """The known dims of `name`, or Refused naming the node, the operand and why."""
        dims, _ = self.types.get(name, (None, 0))
        if dims is None:
            if name in self.graph_inputs:
                raise Refused("%s: %s '%s' is a graph input without a shape (give it one)" % (label, what, name))
            raise Refused("%s: %s '%s' has no shape: shape inference could not derive it (give the model "
                          "value_info for it, or export it with static shapes)" % (label, what, name))
        for axis, dim in enumerate(dims):
            if not isinstance(dim, int) or dim <= 0:
                raise Refused("%s: %s '%s' dimension %d (%s) is dynamic (only a graph input's batch, dimension 0, "
                              "may be: export the model with fixed sizes)" % (label, what, name, axis,
                                                                             describe_dim(dim)))
        return dims

    def dtype(self, name):
        _, elem = self.types.get(name, (None, 0))
        return DTYPES.get(elem)


# onnx.TensorProto.DataType values, by their numbers (stable across onnx versions).
DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 10: "float16",
          11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16"}


# ----------------------------------------------------------------------------------------------------------------
# Lowering

def attributes(onnx, node, label, known):
    values = {}
    for a in node.attribute:
        if a.name not in known:
            raise Refused("%s: attribute %s is not supported (supported: %s)" % (label, a.name, ", ".join(known)))
        values[a.name] = onnx.helper.get_attribute_value(a)
    return values


def operand(node, index, what, label):
    if index >= len(node.input) or not node.input[index]:
        raise Refused("%s: %s (input %d) is missing" % (label, what, index))
    return node.input[index]


def gemm(node, index, m, k, n, count, dtype):
    return {"node": layer_name(node, index), "op": node.op_type, "m": m, "k": k, "n": n, "count": count,
            "dtype": dtype}


# Conv-like ops: where their data and weight are among the inputs.
CONV_OPERANDS = {"Conv": (0, 1), "ConvInteger": (0, 1), "QLinearConv": (0, 3)}
CONV_ATTRIBUTES = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def ints_attribute(values, name, length, default, minimum, label):
    value = list(values.get(name, [default] * length))
    if len(value) != length:
        raise Refused("%s: %s has %d values, expected %d" % (label, name, len(value), length))
    for v in value:
        if v < minimum:
            raise Refused("%s: %s = %s: each must be at least %d" % (label, name, value, minimum))
    return value


def lower_conv(onnx, node, index, shapes):
    """im2col per group, as SCALE-Sim lowers a conv onto a weight-stationary array: the filters of a group on the
    array's columns (m = M / group), the window on its rows (k = C / group x kernel), the output pixels of every image
    streamed (n = N x output pixels); count = group."""
    label = node_label(node, index)
    x_at, w_at = CONV_OPERANDS[node.op_type]
    x = operand(node, x_at, "the input X", label)
    w = operand(node, w_at, "the weight W", label)
    if w not in shapes.constants:
        raise Refused("%s: the weight W '%s' is not a constant (an initializer, a Constant node's output, or computed "
                      "from those alone): a weight computed at run time is not lowered" % (label, w))
    x_dims = shapes.dims(x, "the input X", label)
    w_dims = shapes.dims(w, "the weight W", label)
    if len(w_dims) < 3:
        raise Refused("%s: the weight W '%s' has shape %s; expected [M, C/group, kernel...]" % (label, w, w_dims))
    if len(x_dims) != len(w_dims):
        raise Refused("%s: the input X '%s' has rank %d but the weight W rank %d" % (label, x, len(x_dims),
                                                                                  len(w_dims)))
    spatial = len(w_dims) - 2
    a = attributes(onnx, node, label, CONV_ATTRIBUTES)
    group = a.get("group", 1)
    if group < 1:
        raise Refused("%s: group = %d: must be at least 1" % (label, group))
    batch, channels, inputs = x_dims[0], x_dims[1], x_dims[2:]
    filters, group_channels, kernel = w_dims[0], w_dims[1], w_dims[2:]
    if channels % group or filters % group:
        raise Refused("%s: group = %d does not divide the input channels %d and the filters %d" %
                      (label, group, channels, filters))
    if group_channels * group != channels:
        raise Refused("%s: the weight W has %d channels per group, but the input has %d channels in %d groups" %
                      (label, group_channels, channels, group))
    if "kernel_shape" in a and list(a["kernel_shape"]) != kernel:
        raise Refused("%s: kernel_shape = %s, but the weight W's kernel is %s" % (label, list(a["kernel_shape"]),
                                                                              kernel))
    strides = ints_attribute(a, "strides", spatial, 1, 1, label)
    dilations = ints_attribute(a, "dilations", spatial, 1, 1, label)
    auto_pad = a.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    outputs = []
    if auto_pad in ("NOTSET", "VALID"):
        if auto_pad == "VALID" and "pads" in a:
            raise Refused("%s: auto_pad = VALID with pads given (ONNX allows one or the other)" % label)
        pads = ints_attribute(a, "pads", 2 * spatial, 0, 0, label)
        for axis in range(spatial):
            reach = (kernel[axis] - 1) * dilations[axis] + 1
            padded = inputs[axis] + pads[axis] + pads[axis + spatial]
            if reach > padded:
                raise Refused("%s: spatial axis %d: the dilated kernel (%d) is larger than the padded input (%d)" %
                              (label, axis, reach, padded))
            outputs.append((padded - reach) // strides[axis] + 1)
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if "pads" in a:
            raise Refused("%s: auto_pad = %s with pads given (ONNX allows one or the other)" % (label, auto_pad))
        # The padding makes the output ceil(input / stride) whatever the kernel; which side gets the odd pixel does not
        # change the GEMM.
        outputs = [-(-inputs[axis] // strides[axis]) for axis in range(spatial)]
    else:
        raise Refused("%s: auto_pad = %s is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER)" % (label, auto_pad))
    inferred = shapes.types.get(node.output[0], (None, 0))[0] if node.output else None
    if inferred and all(isinstance(d, int) and d > 0 for d in inferred) and list(inferred[2:]) != outputs:
        raise Refused("%s: the output size is %s by the attributes, but the model gives %s for '%s'" %
                      (label, outputs, list(inferred[2:]), node.output[0]))
    return gemm(node, index, filters // group, group_channels * math.prod(kernel), batch * math.prod(outputs), group,
                shapes.dtype(x))


MATMUL_OPERANDS = {"MatMul": (0, 1), "MatMulInteger": (0, 1), "QLinearMatMul": (0, 3)}


def stationary_and_streamed(a_const, b_const):
    """Which operand of A @ B the array holds: the constant one (the weights); when both or neither are, B -- as a
    layer's weights in x @ W, and the keys (K^T) and values (V) in attention's Q K^T and P V."""
    return "A" if a_const and not b_const else "B"


def lower_product(node, index, label, shapes, a, b, a_dims, b_dims):
    """A @ B in numpy's semantics (rank 1 promoted, batch dimensions broadcast). The stationary matrix is loaded once
    for each distinct matrix it is (count); every batch that shares it streams past it together (folded into n)."""
    a_matrix = [1] + a_dims if len(a_dims) == 1 else a_dims
    b_matrix = b_dims + [1] if len(b_dims) == 1 else b_dims
    m, k = a_matrix[-2], a_matrix[-1]
    k_b, n = b_matrix[-2], b_matrix[-1]
    if k != k_b:
        raise Refused("%s: A '%s' %s and B '%s' %s do not chain: A's last dimension %d is not B's contraction %d" %
                      (label, a, a_dims, b, b_dims, k, k_b))
    a_batch, b_batch = a_matrix[:-2], b_matrix[:-2]
    rank = max(len(a_batch), len(b_batch))
    a_batch = [1] * (rank - len(a_batch)) + a_batch
    b_batch = [1] * (rank - len(b_batch)) + b_batch
    stationary = stationary_and_streamed(a in shapes.constants, b in shapes.constants)
    count, fold = 1, 1
    for axis, (da, db) in enumerate(zip(a_batch, b_batch)):
        if da != db and da != 1 and db != 1:
            raise Refused("%s: batch dimension %d of A '%s' (%d) and of B '%s' (%d) do not broadcast" %
                          (label, axis, a, da, b, db))
        held = db if stationary == "B" else da
        if held == 1:
            fold *= max(da, db)
        else:
            count *= held
    if stationary == "B":  # C^T = B^T A^T: B's columns on the array, A's rows streamed
        return n, k, m * fold, count
    return m, k, n * fold, count


def lower_matmul(onnx, node, index, shapes):
    label = node_label(node, index)
    attributes(onnx, node, label, ())
    a_at, b_at = MATMUL_OPERANDS[node.op_type]
    a = operand(node, a_at, "A", label)
    b = operand(node, b_at, "B", label)
    a_dims = shapes.dims(a, "A", label)
    b_dims = shapes.dims(b, "B", label)
    if not a_dims or not b_dims:
        raise Refused("%s: a scalar operand (A %s, B %s): MatMul needs rank 1 or more" % (label, a_dims, b_dims))
    m, k, n, count = lower_product(node, index, label, shapes, a, b, a_dims, b_dims)
    return gemm(node, index, m, k, n, count, shapes.dtype(a))


def lower_gemm(onnx, node, index, shapes):
    """ONNX Gemm: Y = alpha A' B' + beta C with A' = A or A^T (transA), B' likewise; the bias C is an elementwise add,
    not a GEMM."""
    label = node_label(node, index)
    at = attributes(onnx, node, label, ("alpha", "beta", "transA", "transB"))
    a = operand(node, 0, "A", label)
    b = operand(node, 1, "B", label)
    a_dims = shapes.dims(a, "A", label)
    b_dims = shapes.dims(b, "B", label)
    for what, name, dims in (("A", a, a_dims), ("B", b, b_dims)):
        if len(dims) != 2:
            raise Refused("%s: %s '%s' has shape %s; Gemm takes matrices (rank 2)" % (label, what, name, dims))
    a_dims = a_dims[::-1] if at.get("transA", 0) else a_dims
    b_dims = b_dims[::-1] if at.get("transB", 0) else b_dims
    m, k, n, count = lower_product(node, index, label, shapes, a, b, a_dims, b_dims)
    return gemm(node, index, m, k, n, count, shapes.dtype(a))


LOWERINGS = {"Conv": lower_conv, "ConvInteger": lower_conv, "QLinearConv": lower_conv,
             "MatMul": lower_matmul, "MatMulInteger": lower_matmul, "QLinearMatMul": lower_matmul,
             "Gemm": lower_gemm}


def lower(onnx, model, path, batch):
    effective = set_batch(model, batch)
    inferred = infer_shapes(onnx, model)
    shapes = Shapes(inferred)
    gemms, ignored = [], {}
    for index, node in enumerate(inferred.graph.node):
        lowering = LOWERINGS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if lowering is None:
            op = node.op_type if node.domain in ("", "ai.onnx") else "%s:%s" % (node.domain, node.op_type)
            ignored[op] = ignored.get(op, 0) + 1
            continue
        gemms.append(lowering(onnx, node, index, shapes))
    return {"format": FORMAT, "model": path, "batch": effective, "opset": default_opset(model),
            "nodes": len(model.graph.node), "gemms": gemms,
            "ignored": [{"op": op, "count": c} for op, c in sorted(ignored.items(), key=lambda e: (-e[1], e[0]))]}


def as_workload(result):
    """The GEMMs as a `gemms` workload of a sweep spec, named as `onnx = ...` names the model's workload."""
    name = os.path.splitext(os.path.basename(result["model"]))[0]
    if result["batch"] is not None:
        name += ":batch=%d" % result["batch"]
    return {"name": name, "gemms": [{"name": g["node"], "m": g["m"], "k": g["k"], "n": g["n"], "count": g["count"]}
                                    for g in result["gemms"]]}


def main(argv):
    parser = argparse.ArgumentParser(description="The GEMMs of an ONNX model in pe-vp's convention, as JSON.")
    parser.add_argument("model")
    parser.add_argument("--batch", type=int, help="the graph inputs' dynamic dimension 0 (default: 1)")
    parser.add_argument("--workload", action="store_true",
                        help="print a sweep spec workload instead: {\"name\": ..., \"gemms\": [{name, m, k, n, "
                             "count}, ...]}, one GEMM per node, for a JSON spec's workload list")
    args = parser.parse_args(argv)
    if args.batch is not None and args.batch < 1:
        print("%s: batch = %d: must be at least 1" % (args.model, args.batch), file=sys.stderr)
        return EXIT_REFUSED
    try:
        import onnx
        import onnx.checker
        import onnx.helper
        import onnx.shape_inference
    except ImportError as e:
        print("%s: reading ONNX models needs Debian's python3-onnx for /usr/bin/python3 (apt-get install "
              "python3-onnx): %s" % (args.model, e), file=sys.stderr)
        return EXIT_NO_ONNX
    try:
        model = load_model(onnx, args.model)
        result = lower(onnx, model, args.model, args.batch)
    except Refused as e:
        print("%s: %s" % (args.model, e), file=sys.stderr)
        return EXIT_REFUSED
    if args.workload:
        result = as_workload(result)
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
