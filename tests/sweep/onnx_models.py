#!/usr/bin/python3
"""Writes the small ONNX models of the ONNX workload tests (tests/sweep/test_onnx.cpp) into a folder, built with
onnx.helper at test time: nothing is downloaded and no model is committed.

    /usr/bin/python3 tests/sweep/onnx_models.py OUT_DIR [NAME...]     # NAME.onnx, or every model

The GEMMs each model lowers to are derived by hand in test_onnx.cpp, beside the checks.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def weight(name, *shape, dtype=np.float32):
    return numpy_helper.from_array(np.zeros(shape, dtype=dtype), name)


def tensor(name, *shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, list(shape))


def model(name, nodes, inputs, outputs, initializers=(), value_info=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers),
                              value_info=list(value_info))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="pe-vp tests")


def conv():
    """Convolutions with padding, stride, dilation and auto_pad, on a dynamic batch."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["y1"], name="conv_pad_stride", pads=[1, 1, 1, 1],
                         strides=[2, 2], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["y1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["y2"], name="conv_dilated", pads=[2, 0, 2, 0], dilations=[2, 2]),
        helper.make_node("Relu", ["y2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "w3"], ["y3"], name="conv_same", auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("Add", ["y3", "y3"], ["out"], name="add"),
    ]
    return model("conv", nodes, [tensor("x", "batch", 3, 32, 32)], [tensor("out", "batch", 4, 8, 6)],
                 [weight("w1", 16, 3, 3, 3), weight("b1", 16), weight("w2", 8, 16, 3, 3), weight("w3", 4, 8, 1, 1)])


def grouped_conv():
    """A depthwise convolution, then a grouped one."""
    nodes = [
        helper.make_node("Conv", ["x", "w_dw"], ["y"], name="depthwise", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["y", "w_g"], ["z"], name="grouped", group=4),
    ]
    return model("grouped_conv", nodes, [tensor("x", 1, 8, 10, 10)], [tensor("z", 1, 12, 8, 8)],
                 [weight("w_dw", 8, 1, 3, 3), weight("w_g", 12, 2, 3, 3)])


def gemm():
    """A fully connected layer (Gemm, transB, a bias), a Relu, and a Gemm whose constant is its first operand."""
    nodes = [
        helper.make_node("Gemm", ["x", "w", "bias"], ["h"], name="fc_transb", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["w2", "r"], ["out"], name="fc_const_a", transB=1),
    ]
    return model("gemm", nodes, [tensor("x", "batch", 64)], [tensor("out", 8, "batch")],
                 [weight("w", 32, 64), weight("bias", 32), weight("w2", 8, 32)])


def attention():
    """One attention head group: Q K^T and P V of rank 4 (batch, heads, seq, dim), and two projections of a rank-3
    activation by 2-D weights."""
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], name="k_transpose", perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"], name="scores"),
        helper.make_node("Softmax", ["scores"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["context"], name="context"),
        helper.make_node("MatMul", ["x", "wq"], ["xq"], name="proj_q"),
        helper.make_node("MatMul", ["x", "wk"], ["xk"], name="proj_k"),
    ]
    inputs = [tensor("q", "batch", 4, 16, 8), tensor("k", "batch", 4, 16, 8), tensor("v", "batch", 4, 16, 8),
              tensor("x", "batch", 16, 32)]
    outputs = [tensor("context", "batch", 4, 16, 8), tensor("xq", "batch", 16, 32), tensor("xk", "batch", 16, 32)]
    return model("attention", nodes, inputs, outputs, [weight("wq", 32, 32), weight("wk", 32, 32)])


def missing_shape():
    """A Reshape to a shape only known at run time (a graph input), so its output's shape cannot be inferred."""
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape"),
        helper.make_node("MatMul", ["y", "w"], ["z"], name="mm_after_reshape"),
    ]
    return model("missing_shape", nodes, [tensor("x", 2, 4, 8), tensor("shape", 2, elem=TensorProto.INT64)],
                 [tensor("z", 8, 16)], [weight("w", 32, 16)])


def dynamic_dimension():
    """A sequence length left dynamic beside the batch."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")]
    return model("dynamic_dimension", nodes, [tensor("x", "batch", "seq", 32)], [tensor("y", "batch", "seq", 16)],
                 [weight("w", 32, 16)])


def data_dependent_dimension():
    """NonZero's output has as many columns as the input has non-zero elements: unknown until run time."""
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
        helper.make_node("Cast", ["nz"], ["nzf"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["w", "nzf"], ["y"], name="mm_nonzero"),
    ]
    return model("data_dependent_dimension", nodes, [tensor("x", 4, 4)], [tensor("y", 3, "n")],
                 [weight("w", 3, 2)])


def computed_weight():
    """A Conv whose weight is a graph input, not a constant."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_runtime_weight")]
    return model("computed_weight", nodes, [tensor("x", 1, 3, 8, 8), tensor("w", 4, 3, 3, 3)],
                 [tensor("y", 1, 4, 6, 6)])


def external_data():
    """A weight kept in an external data file beside the model, as exporters write large models."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm_external")]
    return model("external_data", nodes, [tensor("x", "batch", 256)], [tensor("y", "batch", 128)],
                 [numpy_helper.from_array(np.ones((256, 128), dtype=np.float32), "w")])


def quantized():
    """The integer and quantized forms: ConvInteger, QLinearMatMul (whose weight is its fourth input), and a Conv whose
    weight is an int8 initializer's DequantizeLinear, as quantize-dequantize models keep their weights."""
    def scalar(name, value, dtype):
        return numpy_helper.from_array(np.array(value, dtype=dtype), name)

    nodes = [
        helper.make_node("ConvInteger", ["x", "w_conv"], ["y"], name="conv_int"),
        helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zero", "w_mm", "w_scale", "w_zero", "y_scale",
                                           "y_zero"], ["z"], name="matmul_qlinear"),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_q_zero"], ["w_dq"], name="dequantize_weight"),
        helper.make_node("Conv", ["xf", "w_dq"], ["yf"], name="conv_qdq"),
    ]
    inputs = [tensor("x", 1, 2, 5, 5, elem=TensorProto.UINT8), tensor("a", "batch", 4, elem=TensorProto.UINT8),
              tensor("xf", 1, 2, 5, 5)]
    outputs = [tensor("y", 1, 3, 3, 3, elem=TensorProto.INT32), tensor("z", "batch", 8, elem=TensorProto.UINT8),
               tensor("yf", 1, 4, 5, 5)]
    initializers = [weight("w_conv", 3, 2, 3, 3, dtype=np.uint8), weight("w_mm", 4, 8, dtype=np.uint8),
                    scalar("a_scale", 0.1, np.float32), scalar("a_zero", 0, np.uint8),
                    scalar("w_scale", 0.1, np.float32), scalar("w_zero", 0, np.uint8),
                    scalar("y_scale", 0.1, np.float32), scalar("y_zero", 0, np.uint8),
                    weight("w_q", 4, 2, 1, 1, dtype=np.int8), scalar("w_q_zero", 0, np.int8)]
    return model("quantized", nodes, inputs, outputs, initializers)


def bad_auto_pad():
    """An auto_pad value ONNX's checker lets through and pe-vp does not know."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_odd_pad", auto_pad="SAME_MIDDLE")]
    return model("bad_auto_pad", nodes, [tensor("x", 1, 3, 8, 8)], [tensor("y", 1, 4, "h", "w")],
                 [weight("w", 4, 3, 3, 3)])


def contradicted_shape():
    """A Conv whose declared output contradicts its attributes: 8 x 8 with a 3 x 3 kernel gives 6 x 6, not 8 x 8."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_declared_8x8")]
    return model("contradicted_shape", nodes, [tensor("x", 1, 3, 8, 8)], [tensor("y", 1, 4, 8, 8)],
                 [weight("w", 4, 3, 3, 3)])


def unknown_attribute():
    """An attribute Conv does not have: ONNX's checker refuses it."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_extra", foo=3)]
    return model("unknown_attribute", nodes, [tensor("x", 1, 3, 8, 8)], [tensor("y", 1, 4, 6, 6)],
                 [weight("w", 4, 3, 3, 3)])


def unnamed():
    """A MatMul and a Conv without names."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Conv", ["image", "filters"], ["z"])]
    return model("unnamed", nodes, [tensor("x", 1, 4), tensor("image", 1, 1, 4, 4)],
                 [tensor("y", 1, 2), tensor("z", 1, 1, 2, 2)], [weight("w", 4, 2), weight("filters", 1, 1, 3, 3)])


def unnamed_refused():
    """A Relu, then a Conv without a name whose weight is a graph input."""
    nodes = [helper.make_node("Relu", ["image"], ["r"]), helper.make_node("Conv", ["r", "filters"], ["z"])]
    return model("unnamed_refused", nodes, [tensor("image", 1, 1, 4, 4), tensor("filters", 1, 1, 3, 3)],
                 [tensor("z", 1, 1, 2, 2)])


def no_gemm():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    return model("no_gemm", nodes, [tensor("x", 1, 8)], [tensor("y", 1, 8)])


def bert_block():
    """One BERT-base encoder block as a framework exports it (768 wide, 12 heads of 64, FFN 3072), with a dynamic
    batch and 128 tokens: projections x @ W of rank 3, heads split by Reshape and Transpose, Q K^T and P V of rank 4."""
    d, heads, head_dim, ffn, seq = 768, 12, 64, 3072, 128
    nodes = []
    for name in ("q", "k", "v"):
        nodes.append(helper.make_node("MatMul", ["x", "w_" + name], [name + "_flat"], name=name + "_proj"))
        nodes.append(helper.make_node("Reshape", [name + "_flat", "heads_shape"], [name + "_heads"],
                                      name=name + "_split"))
    # q, v: [b, heads, seq, head_dim]; k: [b, heads, head_dim, seq]
    nodes.append(helper.make_node("Transpose", ["q_heads"], ["q_t"], name="q_transpose", perm=[0, 2, 1, 3]))
    nodes.append(helper.make_node("Transpose", ["k_heads"], ["k_t"], name="k_transpose", perm=[0, 2, 3, 1]))
    nodes.append(helper.make_node("Transpose", ["v_heads"], ["v_t"], name="v_transpose", perm=[0, 2, 1, 3]))
    nodes += [
        helper.make_node("MatMul", ["q_t", "k_t"], ["scores"], name="attn_scores"),
        helper.make_node("Softmax", ["scores"], ["probs"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "v_t"], ["context"], name="attn_context"),
        helper.make_node("Transpose", ["context"], ["context_t"], name="merge_transpose", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["context_t", "model_shape"], ["context_flat"], name="merge"),
        helper.make_node("MatMul", ["context_flat", "w_o"], ["attn_out"], name="out_proj"),
        helper.make_node("Add", ["attn_out", "x"], ["residual"], name="residual"),
        helper.make_node("MatMul", ["residual", "w_up"], ["up"], name="ffn_up"),
        helper.make_node("Erf", ["up"], ["act"], name="gelu_erf"),
        helper.make_node("MatMul", ["act", "w_down"], ["y"], name="ffn_down"),
    ]
    initializers = [weight("w_" + name, d, d) for name in ("q", "k", "v", "o")]
    initializers += [weight("w_up", d, ffn), weight("w_down", ffn, d),
                     numpy_helper.from_array(np.array([0, 0, heads, head_dim], dtype=np.int64), "heads_shape"),
                     numpy_helper.from_array(np.array([0, 0, d], dtype=np.int64), "model_shape")]
    return model("bert_block", nodes, [tensor("x", "batch", seq, d)], [tensor("y", "batch", seq, d)], initializers)


def resnet50():
    """ResNet-50 v1.5 at 224 x 224 with a dynamic batch, as torchvision builds it: the 7 x 7 / 2 stem, a 3 x 3 / 2 max
    pool, 16 bottlenecks (the stride 2 in a stage's 3 x 3, a 1 x 1 projection on each stage's first block), the global
    average pool and the classifier; batch normalisation left out (folded into the convolutions, as exporters do for
    inference). Each weight is a ConstantOfShape of its shape, so the file stays small: a weight computed from
    constants alone is a constant."""
    nodes, initializers = [], []

    def conv(name, x, channels, filters, kernel, stride, pad):
        shape = numpy_helper.from_array(np.array([filters, channels, kernel, kernel], dtype=np.int64), name + "_shape")
        initializers.append(shape)
        nodes.append(helper.make_node("ConstantOfShape", [shape.name], [name + "_w"], name=name + "_weight"))
        nodes.append(helper.make_node("Conv", [x, name + "_w"], [name], name=name, kernel_shape=[kernel, kernel],
                                      strides=[stride, stride], pads=[pad] * 4))
        return name

    def relu(x):
        nodes.append(helper.make_node("Relu", [x], [x + "_relu"], name=x + "_relu"))
        return x + "_relu"

    x = relu(conv("conv1", "image", 3, 64, 7, 2, 3))
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], name="maxpool", kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    x, channels = "pool", 64
    for stage, (blocks, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512)), start=2):
        for block in range(1, blocks + 1):
            stride = 2 if stage > 2 and block == 1 else 1
            name = "conv%d_%d" % (stage, block)
            a = relu(conv(name + "_a", x, channels, width, 1, 1, 0))
            b = relu(conv(name + "_b", a, width, width, 3, stride, 1))
            c = conv(name + "_c", b, width, 4 * width, 1, 1, 0)
            shortcut = conv(name + "_proj", x, channels, 4 * width, 1, stride, 0) if block == 1 else x
            nodes.append(helper.make_node("Add", [c, shortcut], [name + "_sum"], name=name + "_add"))
            x, channels = relu(name + "_sum"), 4 * width
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="avgpool"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["features"], name="flatten"))
    initializers.append(numpy_helper.from_array(np.array([1000, 2048], dtype=np.int64), "fc_shape"))
    nodes.append(helper.make_node("ConstantOfShape", ["fc_shape"], ["fc_w"], name="fc_weight"))
    nodes.append(helper.make_node("Gemm", ["features", "fc_w"], ["logits"], name="fc", transB=1))
    return model("resnet50", nodes, [tensor("image", "batch", 3, 224, 224)], [tensor("logits", "batch", 1000)],
                 initializers)


MODELS = {"conv": conv, "grouped_conv": grouped_conv, "gemm": gemm, "attention": attention,
          "missing_shape": missing_shape, "dynamic_dimension": dynamic_dimension,
          "data_dependent_dimension": data_dependent_dimension, "computed_weight": computed_weight,
          "no_gemm": no_gemm, "quantized": quantized, "bert_block": bert_block, "resnet50": resnet50,
          "bad_auto_pad": bad_auto_pad, "unknown_attribute": unknown_attribute, "unnamed": unnamed,
          "unnamed_refused": unnamed_refused, "contradicted_shape": contradicted_shape}


def write(out_dir, name):
    path = os.path.join(out_dir, name + ".onnx")
    if name == "external_data":
        onnx.save_model(external_data(), path, save_as_external_data=True, location="external_data.bin",
                        size_threshold=0)
    elif name == "truncated":  # a download cut short: the first half of a valid model
        data = conv().SerializeToString()
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
    elif name == "not_onnx":
        with open(path, "w") as f:
            f.write("name = \"a TOML file given as a model\"\n")
    else:
        onnx.save(MODELS[name](), path)


def main(out_dir, names):
    os.makedirs(out_dir, exist_ok=True)
    for name in names or list(MODELS) + ["external_data", "truncated", "not_onnx"]:
        write(out_dir, name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
