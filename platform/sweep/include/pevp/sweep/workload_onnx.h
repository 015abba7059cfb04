// ONNX models as workloads of `pe-vp sweep` (`onnx = "model.onnx"`): scripts/onnx_gemms.py reads the model with
// Debian's python3-onnx, runs ONNX shape inference and lowers every Conv, Gemm and MatMul node (their integer and
// quantized forms too) to pe-vp GEMMs -- one per node, with the node's name, op and dtype -- and counts the nodes it
// did not lower by op. This unit runs the script, validates what it printed, and groups the GEMMs by shape into a
// Network, as a SCALE-Sim topology's layers are. How each op is lowered: docs/sweeps.md "ONNX models" and
// D-ONNX-LOWERING. Plain C++, no SystemC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pevp/sweep/workload.h"

namespace pevp::sweep {

// One lowered node: pe-vp's C[m,n] = A[m,k] @ B[k,n] with A stationary, run `count` times (groups, heads).
struct OnnxGemm {
  std::string node;  // the node's name, or OP_INDEX for an unnamed node
  std::string op;    // Conv, Gemm, MatMul, ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul
  std::uint64_t m = 0, k = 0, n = 0, count = 1;
  std::optional<std::string> dtype;  // the streamed input's element type ("float32"), when the model gives it
};

// What scripts/onnx_gemms.py found in a model.
struct OnnxGemms {
  std::string model;                   // the path the script was given
  std::optional<std::uint64_t> batch;  // the graph inputs' dynamic dimension 0; none when the model has none
  std::uint64_t nodes = 0;             // the graph's nodes, lowered or not
  std::vector<OnnxGemm> gemms;         // one per lowered node, in graph order
  std::vector<IgnoredOp> ignored;      // the other nodes by op, most frequent first
};

// The script's JSON output (its "pevp-onnx-gemms-1" format) as typed data. WorkloadError naming `source` and the
// field when it is not that format: a missing or mistyped field, a zero dimension, a model without a GEMM.
OnnxGemms parse_onnx_gemms(std::string_view json_text, const std::string& source);

// The script run on the model at `path` by /usr/bin/python3 (`--batch` when given). WorkloadError with the script's
// own message when it refuses the model ("m.onnx: node 'conv1' (Conv): the weight W 'w' is not a constant ..."), and
// a precise one when python3 or python3-onnx is missing or the script is not found.
OnnxGemms run_onnx_gemms(const std::string& path, std::optional<std::uint64_t> batch);

// The GEMMs grouped by shape, in the order each shape first appears: one layer per distinct (m, k, n), its count
// the sum of the counts, named after its first node ("layer1.conv2 (+5 more)" when six nodes share it). The
// network is named `name` and carries the ignored ops.
Network onnx_network(const OnnxGemms& gemms, const std::string& name);

// run_onnx_gemms, then onnx_network named after the file without directory and extension, with ":batch=B" when the
// model has a dynamic batch ("resnet18:batch=1").
Network read_onnx(const std::string& path, std::optional<std::uint64_t> batch);

// The script: $PEVP_ONNX_GEMMS when set, else the source tree's scripts/onnx_gemms.py, else the installed one
// (share/pevp/scripts beside this program's bin/).
std::string onnx_gemms_script();

}  // namespace pevp::sweep
