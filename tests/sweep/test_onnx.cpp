// ONNX models as sweep workloads: small models built with onnx.helper at test time (tests/sweep/onnx_models.py),
// read through scripts/onnx_gemms.py as `pe-vp sweep` reads them, and their GEMMs checked against values derived by
// hand below; the models pe-vp must refuse, refused naming the node (or input) and the rule; the script's output
// validated; and an ONNX workload swept end to end through the `pe-vp` binary. The tests that need Debian's
// python3-onnx skip only when it is absent.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "shell_run.h"

#include "pevp/sweep/spec.h"
#include "pevp/sweep/workload.h"
#include "pevp/sweep/workload_onnx.h"

namespace {

namespace fs = std::filesystem;
using pevp::sweep::Gemm;
using pevp::sweep::IgnoredOp;
using pevp::sweep::Network;
using pevp::sweep::OnnxGemm;
using pevp::sweep::OnnxGemms;
using pevp::sweep::WorkloadError;

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

using pevp::sweep_test::Result;
using pevp::sweep_test::sh;
using pevp::sweep_test::slurp;

std::string scratch(const std::string& name) { return pevp::sweep_test::scratch_dir("pevp_onnx_", name); }

const std::string kScript = PEVP_SOURCE_DIR "/scripts/onnx_gemms.py";

bool have_onnx() {
  static const bool have = std::system("/usr/bin/python3 -c 'import onnx' > /dev/null 2>&1") == 0;
  return have;
}

// The test models, in a folder of this test process's own, each written when a test first asks for it.
const std::string& models() {
  static const std::string dir = scratch("models");
  return dir;
}

std::string model(const std::string& name) {
  const std::string path = models() + "/" + name + ".onnx";
  if (!fs::exists(path)) {
    const Result r = sh("/usr/bin/python3 " PEVP_SOURCE_DIR "/tests/sweep/onnx_models.py " + models() + " " + name,
                        models());
    if (r.status != 0) ADD_FAILURE() << "onnx_models.py " << name << " failed: " << r.err;
  }
  return path;
}

#define REQUIRE_ONNX() \
  if (!have_onnx()) GTEST_SKIP() << "python3-onnx is not installed (apt-get install python3-onnx)"

std::string refusal(const std::string& path, std::optional<std::uint64_t> batch = std::nullopt) {
  try {
    pevp::sweep::read_onnx(path, batch);
  } catch (const WorkloadError& e) {
    return e.what();
  }
  return "(accepted)";
}

void expect_gemm(const OnnxGemm& g, const char* node, const char* op, std::uint64_t m, std::uint64_t k,
                 std::uint64_t n, std::uint64_t count, const char* dtype = "float32") {
  EXPECT_EQ(g.node, node);
  EXPECT_EQ(g.op, op);
  EXPECT_EQ(g.m, m) << node;
  EXPECT_EQ(g.k, k) << node;
  EXPECT_EQ(g.n, n) << node;
  EXPECT_EQ(g.count, count) << node;
  EXPECT_EQ(g.dtype, dtype) << node;
}

void expect_ignored(const std::vector<IgnoredOp>& ignored,
                    const std::vector<std::pair<std::string, std::uint64_t>>& want) {
  ASSERT_EQ(ignored.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(ignored[i].op, want[i].first);
    EXPECT_EQ(ignored[i].count, want[i].second);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Lowering

// conv.onnx, input x [batch, 3, 32, 32], at batch 2. pe-vp m = filters per group, k = channels per group x kernel,
// n = batch x output pixels (the filters stationary, every image's pixels streamed), count = groups.
//   conv_pad_stride: W [16,3,3,3], pads 1, stride 2: out = floor((32 + 2 - 3) / 2) + 1 = 16 -> 16 x 16
//                    m = 16, k = 3*3*3 = 27, n = 2 * 256 = 512            MACs 16*27*512  = 221,184
//   conv_dilated:    W [8,16,3,3] on 16 x 16, dilation 2 (reach (3-1)*2+1 = 5), pads top/bottom 2, left/right 0:
//                    h = (16 + 4 - 5) + 1 = 16, w = (16 - 5) + 1 = 12
//                    m = 8, k = 16*9 = 144, n = 2 * 192 = 384             MACs 8*144*384  = 442,368
//   conv_same:       W [4,8,1,1] on 16 x 12, SAME_UPPER, stride 2: out = ceil(16/2) x ceil(12/2) = 8 x 6
//                    m = 4, k = 8, n = 2 * 48 = 96                        MACs 4*8*96     =   3,072
// Total 666,624 MACs; two Relu and an Add are not GEMMs.
TEST(OnnxLowering, ConvWithPaddingStrideDilationAndSamePadding) {
  REQUIRE_ONNX();
  const OnnxGemms g = pevp::sweep::run_onnx_gemms(model("conv"), 2);
  EXPECT_EQ(g.batch, 2u);
  EXPECT_EQ(g.nodes, 6u);
  ASSERT_EQ(g.gemms.size(), 3u);
  expect_gemm(g.gemms[0], "conv_pad_stride", "Conv", 16, 27, 512, 1);
  expect_gemm(g.gemms[1], "conv_dilated", "Conv", 8, 144, 384, 1);
  expect_gemm(g.gemms[2], "conv_same", "Conv", 4, 8, 96, 1);
  expect_ignored(g.ignored, {{"Relu", 2}, {"Add", 1}});
  const Network net = pevp::sweep::read_onnx(model("conv"), 2);
  EXPECT_EQ(net.name, "conv:batch=2");
  EXPECT_EQ(pevp::sweep::total_macs(net), 666624u);
  EXPECT_EQ(pevp::sweep::ignored_text(net.ignored), "ignored: 2 Relu, 1 Add");
}

// grouped_conv.onnx, x [1, 8, 10, 10] (a fixed batch: no batch option).
//   depthwise: W [8,1,3,3], group 8, pads 1: 10 x 10 out; per group 1 filter of 1 channel:
//              m = 1, k = 1*9 = 9, n = 100, count 8                       MACs 8*1*9*100   =  7,200
//   grouped:   W [12,2,3,3], group 4, no pads on 10 x 10: 8 x 8 out; per group 12/4 = 3 filters of 8/4 = 2 channels:
//              m = 3, k = 2*9 = 18, n = 64, count 4                       MACs 4*3*18*64   = 13,824
// Total 21,024 = the framework's count: depthwise 8 channels x 100 pixels x 9, grouped 12 x 64 x 18.
TEST(OnnxLowering, GroupedAndDepthwiseConvRunOncePerGroup) {
  REQUIRE_ONNX();
  const OnnxGemms g = pevp::sweep::run_onnx_gemms(model("grouped_conv"), std::nullopt);
  EXPECT_FALSE(g.batch.has_value());
  ASSERT_EQ(g.gemms.size(), 2u);
  expect_gemm(g.gemms[0], "depthwise", "Conv", 1, 9, 100, 8);
  expect_gemm(g.gemms[1], "grouped", "Conv", 3, 18, 64, 4);
  EXPECT_TRUE(g.ignored.empty());
  const Network net = pevp::sweep::read_onnx(model("grouped_conv"), std::nullopt);
  EXPECT_EQ(net.name, "grouped_conv");
  EXPECT_EQ(pevp::sweep::total_macs(net), 21024u);
}

// gemm.onnx, x [batch, 64], at batch 4.
//   fc_transb:  Y = x W^T + bias, W [32, 64] constant: ONNX M = 4, K = 64, N = 32; W stationary:
//               m = 32, k = 64, n = 4                                     MACs 8,192
//   fc_const_a: Y = W2 r^T, W2 [8, 32] constant (the first operand), r [4, 32] transposed: M = 8, K = 32, N = 4;
//               W2 stationary as it is: m = 8, k = 32, n = 4              MACs 1,024
TEST(OnnxLowering, GemmWithTransBHoldsTheConstantOperand) {
  REQUIRE_ONNX();
  const OnnxGemms g = pevp::sweep::run_onnx_gemms(model("gemm"), 4);
  ASSERT_EQ(g.gemms.size(), 2u);
  expect_gemm(g.gemms[0], "fc_transb", "Gemm", 32, 64, 4, 1);
  expect_gemm(g.gemms[1], "fc_const_a", "Gemm", 8, 32, 4, 1);
  expect_ignored(g.ignored, {{"Relu", 1}});
  EXPECT_EQ(pevp::sweep::total_macs(pevp::sweep::read_onnx(model("gemm"), 4)), 9216u);
}

// attention.onnx: q, k, v [batch, 4 heads, 16 tokens, 8], x [batch, 16, 32], at batch 2.
//   scores  = q @ k^T, [2,4,16,8] @ [2,4,8,16]: k^T stationary (m = 16 keys, k = 8), the queries streamed (n = 16),
//             one per (batch, head): count 2*4 = 8                        MACs 8*16*8*16  = 16,384
//   context = p @ v,   [2,4,16,16] @ [2,4,16,8]: v stationary (m = 8, k = 16), p's rows streamed (n = 16), count 8
//                                                                          MACs 8*8*16*16  = 16,384
//   proj_q, proj_k = x @ W, [2,16,32] @ [32,32]: W shared by every batch, so the batch folds into the streamed side:
//             m = 32, k = 32, n = 2*16 = 32, count 1 each; one shape, so one layer of count 2
//                                                                          MACs 2*32*32*32 = 65,536
// Total 98,304 MACs; the Transpose and the Softmax are not GEMMs.
TEST(OnnxLowering, BatchedAttentionMatMulsOfRankFour) {
  REQUIRE_ONNX();
  const OnnxGemms g = pevp::sweep::run_onnx_gemms(model("attention"), 2);
  ASSERT_EQ(g.gemms.size(), 4u);
  expect_gemm(g.gemms[0], "scores", "MatMul", 16, 8, 16, 8);
  expect_gemm(g.gemms[1], "context", "MatMul", 8, 16, 16, 8);
  expect_gemm(g.gemms[2], "proj_q", "MatMul", 32, 32, 32, 1);
  expect_gemm(g.gemms[3], "proj_k", "MatMul", 32, 32, 32, 1);
  expect_ignored(g.ignored, {{"Softmax", 1}, {"Transpose", 1}});
  const Network net = pevp::sweep::onnx_network(g, "attention");
  ASSERT_EQ(net.layers.size(), 3u);
  EXPECT_EQ(net.layers[2].name, "proj_q (+1 more)");
  EXPECT_EQ(net.layers[2].count, 2u);
  EXPECT_EQ(pevp::sweep::total_macs(net), 98304u);
  // Without a batch the dynamic batch is 1: four heads' scores, 16 tokens through each projection.
  const OnnxGemms one = pevp::sweep::run_onnx_gemms(model("attention"), std::nullopt);
  EXPECT_EQ(one.batch, 1u);
  expect_gemm(one.gemms[0], "scores", "MatMul", 16, 8, 16, 4);
  expect_gemm(one.gemms[2], "proj_q", "MatMul", 32, 32, 16, 1);
  EXPECT_EQ(pevp::sweep::read_onnx(model("attention"), std::nullopt).name, "attention:batch=1");
}

// quantized.onnx at batch 5:
//   conv_int:       ConvInteger, x [1, 2, 5, 5] uint8, W [3, 2, 3, 3]: 3 x 3 out; m = 3, k = 2*9 = 18, n = 9
//   matmul_qlinear: QLinearMatMul, a [5, 4] uint8 @ W [4, 8] (its fourth input): m = 8, k = 4, n = 5
//   conv_qdq:       Conv, xf [1, 2, 5, 5] float, W = DequantizeLinear(int8 [4, 2, 1, 1]) -- computed from constants
//                   alone, so a constant: 5 x 5 out; m = 4, k = 2, n = 25
TEST(OnnxLowering, IntegerAndQuantizedFormsLowerAsTheirFloatOps) {
  REQUIRE_ONNX();
  const OnnxGemms g = pevp::sweep::run_onnx_gemms(model("quantized"), 5);
  ASSERT_EQ(g.gemms.size(), 3u);
  expect_gemm(g.gemms[0], "conv_int", "ConvInteger", 3, 18, 9, 1, "uint8");
  expect_gemm(g.gemms[1], "matmul_qlinear", "QLinearMatMul", 8, 4, 5, 1, "uint8");
  expect_gemm(g.gemms[2], "conv_qdq", "Conv", 4, 2, 25, 1);
  expect_ignored(g.ignored, {{"DequantizeLinear", 1}});
}

// external_data.onnx keeps its weight w [256, 128] in external_data.bin beside it; the sizes are in the model, so it
// lowers from any working folder: x [3, 256] @ w, w stationary: m = 128, k = 256, n = 3.
TEST(OnnxLowering, AWeightInAnExternalDataFile) {
  REQUIRE_ONNX();
  const OnnxGemms g = pevp::sweep::run_onnx_gemms(model("external_data"), 3);
  ASSERT_EQ(g.gemms.size(), 1u);
  expect_gemm(g.gemms[0], "mm_external", "MatMul", 128, 256, 3, 1);
}

// A network's GEMMs as (m, k, n) -> how many run.
std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, std::uint64_t> by_shape(const Network& net) {
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, std::uint64_t> counts;
  for (const Gemm& g : net.layers) counts[{g.m, g.k, g.n}] += g.count;
  return counts;
}

// resnet50.onnx is ResNet-50 v1.5 as torchvision builds it (53 convolutions with their strides and padding, the
// classifier a Gemm with transB). At batch 2 it must lower to the GEMMs of the built-in resnet50:batch=2, written from
// the paper's table: 2 x (4,087,136,256 + 2,048,000) = 8,178,368,512 MACs. What is not a GEMM, counted by hand: a
// ConstantOfShape per weight (53 + 1), a Relu after the stem and three per bottleneck (1 + 16 x 3), an Add per
// bottleneck, and the max pool, the average pool and the Flatten.
TEST(OnnxLowering, AnExportedResNet50IsTheBuiltInOne) {
  REQUIRE_ONNX();
  const Network onnx = pevp::sweep::read_onnx(model("resnet50"), 2);
  const Network builtin = pevp::sweep::builtin_network("resnet50:batch=2");
  EXPECT_EQ(by_shape(onnx), by_shape(builtin));
  EXPECT_EQ(pevp::sweep::total_macs(onnx), 8178368512u);
  expect_ignored(onnx.ignored, {{"ConstantOfShape", 54}, {"Relu", 49}, {"Add", 16}, {"Flatten", 1},
                                {"GlobalAveragePool", 1}, {"MaxPool", 1}});
}

// bert_block.onnx is one BERT-base encoder block as a framework exports it (128 tokens, heads split by Reshape and
// Transpose, residual and GELU as Add and Erf). At batch 2 it must lower to the GEMMs of the built-in
// bert_base:seq=128,batch=2, which is written from the paper's shapes: the same shapes with the same counts.
TEST(OnnxLowering, AnExportedBertBlockIsTheBuiltInOne) {
  REQUIRE_ONNX();
  const Network onnx = pevp::sweep::read_onnx(model("bert_block"), 2);
  const Network builtin = pevp::sweep::builtin_network("bert_base:seq=128,batch=2");
  EXPECT_EQ(by_shape(onnx), by_shape(builtin));
  EXPECT_EQ(pevp::sweep::total_macs(onnx), pevp::sweep::total_macs(builtin));
  // The four 768 x 768 projections are one layer: q_proj's, with k, v and out.
  ASSERT_FALSE(onnx.layers.empty());
  EXPECT_EQ(onnx.layers[0].name, "q_proj (+3 more)");
  EXPECT_EQ(onnx.layers[0].count, 4u);
  expect_ignored(onnx.ignored, {{"Reshape", 4}, {"Transpose", 4}, {"Add", 1}, {"Erf", 1}, {"Softmax", 1}});
}

// ---------------------------------------------------------------------------------------------------------------
// Refusals: each names the model, the node (or graph input) and the rule.

TEST(OnnxRefusals, ATruncatedOrForeignFileIsNotAModel) {
  REQUIRE_ONNX();
  EXPECT_EQ(refusal(model("truncated")),
            model("truncated") + ": not an ONNX model: protobuf cannot parse it (Error parsing message with type "
                                 "'onnx.ModelProto'): a truncated or foreign file");
  EXPECT_EQ(refusal(model("not_onnx")),
            model("not_onnx") + ": not an ONNX model: protobuf cannot parse it (Error parsing message with type "
                                "'onnx.ModelProto'): a truncated or foreign file");
  const std::string empty = write(models() + "/empty.onnx", "");  // an existing file: not generated
  EXPECT_EQ(refusal(empty), empty + ": not an ONNX model: the file is empty");
  EXPECT_EQ(refusal(models() + "/absent.onnx"), models() + "/absent.onnx: cannot open: No such file or directory");
  EXPECT_EQ(refusal(models()), models() + ": is a directory");
  EXPECT_EQ(refusal("/dev/zero"), "/dev/zero: not a regular file (a model is read from a file)");
}

TEST(OnnxRefusals, ANodeWhoseInputHasNoShapeIsNamed) {
  REQUIRE_ONNX();
  EXPECT_EQ(refusal(model("missing_shape")),
            model("missing_shape") + ": node 'mm_after_reshape' (MatMul): A 'y' has no shape: shape inference could "
                                     "not derive it (give the model value_info for it, or export it with static "
                                     "shapes)");
}

TEST(OnnxRefusals, ADynamicDimensionOtherThanTheBatchIsNamed) {
  REQUIRE_ONNX();
  EXPECT_EQ(refusal(model("dynamic_dimension")),
            model("dynamic_dimension") + ": graph input 'x' (read by node 'proj' (MatMul)): dimension 1 ('seq') is "
                                         "dynamic; only the batch, dimension 0, may be: export the model with fixed "
                                         "sizes");
  // A dimension only known at run time (NonZero's count), met at the node that needs it.
  EXPECT_EQ(refusal(model("data_dependent_dimension")),
            model("data_dependent_dimension") + ": node 'mm_nonzero' (MatMul): B 'nzf' dimension 1 ('unk__0') is "
                                                "dynamic (only a graph input's batch, dimension 0, may be: export the "
                                                "model with fixed sizes)");
}

TEST(OnnxRefusals, AConvWithAWeightComputedAtRunTime) {
  REQUIRE_ONNX();
  EXPECT_EQ(refusal(model("computed_weight")),
            model("computed_weight") + ": node 'conv_runtime_weight' (Conv): the weight W 'w' is not a constant (an "
                                       "initializer, a Constant node's output, or computed from those alone): a "
                                       "weight computed at run time is not lowered");
}

TEST(OnnxRefusals, AnAttributePeVpOrOnnxDoesNotKnow) {
  REQUIRE_ONNX();
  EXPECT_EQ(refusal(model("bad_auto_pad")),
            model("bad_auto_pad") + ": node 'conv_odd_pad' (Conv): auto_pad = SAME_MIDDLE is not supported (NOTSET, "
                                    "VALID, SAME_UPPER, SAME_LOWER)");
  EXPECT_EQ(refusal(model("unknown_attribute")),
            model("unknown_attribute") + ": not a valid ONNX model: node 'conv_extra' (Conv): Unrecognized attribute: "
                                         "foo for operator Conv");
}

// The model's own output shape says 8 x 8 where a 3 x 3 kernel on 8 x 8 gives 6 x 6.
TEST(OnnxRefusals, AShapeTheModelContradicts) {
  REQUIRE_ONNX();
  EXPECT_EQ(refusal(model("contradicted_shape")),
            model("contradicted_shape") + ": shape inference failed: node 'conv_declared_8x8' (Conv): Inferred shape "
                                          "and existing shape differ in dimension 2: (6) vs (8)");
}

// A node without a name is named by its place in the graph: OP_INDEX as a layer, "node #INDEX (OP, unnamed)" in a
// refusal.
TEST(OnnxRefusals, AnUnnamedNodeIsNamedByItsPlace) {
  REQUIRE_ONNX();
  const OnnxGemms g = pevp::sweep::run_onnx_gemms(model("unnamed"), std::nullopt);
  ASSERT_EQ(g.gemms.size(), 2u);
  expect_gemm(g.gemms[0], "MatMul_0", "MatMul", 2, 4, 1, 1);  // x [1, 4] @ w [4, 2]: w stationary, m = 2, n = 1
  expect_gemm(g.gemms[1], "Conv_1", "Conv", 1, 9, 4, 1);      // 3 x 3 on 4 x 4: 2 x 2 out, m = 1, k = 9, n = 4
  EXPECT_EQ(refusal(model("unnamed_refused")),
            model("unnamed_refused") + ": node #1 (Conv, unnamed): the weight W 'filters' is not a constant (an "
                                       "initializer, a Constant node's output, or computed from those alone): a "
                                       "weight computed at run time is not lowered");
}

TEST(OnnxRefusals, ABatchTheModelCannotTake) {
  REQUIRE_ONNX();
  EXPECT_EQ(refusal(model("grouped_conv"), 4),
            model("grouped_conv") + ": batch = 4, but no graph input has a dynamic dimension 0 (the model's sizes "
                                    "are fixed: export it with a dynamic batch axis)");
}

TEST(OnnxRefusals, AModelWithoutAGemm) {
  REQUIRE_ONNX();
  EXPECT_EQ(refusal(model("no_gemm")),
            model("no_gemm") + ": no Conv, Gemm or MatMul node: nothing to simulate (ignored: 1 Relu)");
}

// Without python3-onnx the script says which package to install, and pe-vp passes its message on. The script is
// run with its interpreter's dist-packages hidden, as on a machine without the package.
TEST(OnnxRefusals, AMissingPython3OnnxNamesThePackage) {
  const std::string dir = scratch("no_onnx");
  const std::string hiding = write(dir + "/hide_onnx.py",
                                   "import runpy, sys\n"
                                   "sys.path = [p for p in sys.path if 'dist-packages' not in p]\n"
                                   "sys.argv = ['" + kScript + "'] + sys.argv[1:]\n"
                                   "runpy.run_path('" + kScript + "', run_name='__main__')\n");
  const std::string given = write(dir + "/m.onnx", "not read: the script stops at its import");
  const Result r = sh("/usr/bin/python3 " + hiding + " " + given, dir);
  EXPECT_EQ(r.status, 3);
  const std::string message = given +
                              ": reading ONNX models needs Debian's python3-onnx for /usr/bin/python3 (apt-get "
                              "install python3-onnx): No module named 'onnx'";
  EXPECT_EQ(r.err, message + "\n");
  ::setenv("PEVP_ONNX_GEMMS", hiding.c_str(), 1);
  EXPECT_EQ(refusal(given), message);
  ::unsetenv("PEVP_ONNX_GEMMS");
}

TEST(OnnxRefusals, AScriptThatIsNotThereIsNamed) {
  const std::string given = write(scratch("no_script") + "/m.onnx", "");
  ::setenv("PEVP_ONNX_GEMMS", "/nonexistent/onnx_gemms.py", 1);
  EXPECT_EQ(refusal(given), given + ": /nonexistent/onnx_gemms.py not found (set PEVP_ONNX_GEMMS to "
                                    "scripts/onnx_gemms.py)");
  ::unsetenv("PEVP_ONNX_GEMMS");
}

// ---------------------------------------------------------------------------------------------------------------
// The script's output is checked before it is used, and grouped by shape.

std::string parse_error(const std::string& text) {
  try {
    pevp::sweep::parse_onnx_gemms(text, "m.onnx");
  } catch (const WorkloadError& e) {
    return e.what();
  }
  return "(accepted)";
}

const std::string kHead = R"({"format": "pevp-onnx-gemms-1", "model": "m.onnx", "batch": 1, "nodes": 2, )";

TEST(OnnxOutput, MalformedOutputIsRefusedNamingTheField) {
  EXPECT_EQ(parse_error(kHead + R"("gemms": [{"node": "a", "op": "MatMul", "m": 0, "k": 1, "n": 1, "count": 1,
                                   "dtype": null}], "ignored": []})"),
            "m.onnx: the output of scripts/onnx_gemms.py is malformed: gemms[0].m: expected a positive integer, got 0");
  EXPECT_EQ(parse_error(kHead + R"("gemms": [{"node": "a", "op": "MatMul", "m": 1, "k": 1, "n": 1, "count": 1}],
                                   "ignored": []})"),
            "m.onnx: the output of scripts/onnx_gemms.py is malformed: gemms[0].dtype: missing");
  EXPECT_EQ(parse_error(kHead + R"("gemms": [{"node": "a", "op": "MatMul", "m": 1, "k": 1, "n": 1, "count": 1,
                                   "dtype": 16}], "ignored": []})"),
            "m.onnx: the output of scripts/onnx_gemms.py is malformed: gemms[0].dtype: expected a string or null, "
            "got 16");
  EXPECT_EQ(parse_error(kHead + R"("gemms": [], "ignored": [{"op": "Relu", "count": -1}]})"),
            "m.onnx: the output of scripts/onnx_gemms.py is malformed: ignored[0].count: expected a positive "
            "integer, got -1");
  EXPECT_EQ(parse_error(R"({"format": "pevp-onnx-gemms-2"})"),
            "m.onnx: the output of scripts/onnx_gemms.py is malformed: format: \"pevp-onnx-gemms-2\", expected "
            "\"pevp-onnx-gemms-1\" (the script and pe-vp differ in version)");
  EXPECT_NE(parse_error("Traceback (most recent call last):").find(
                "m.onnx: the output of scripts/onnx_gemms.py is not JSON: "),
            std::string::npos);
}

// Six nodes of three shapes: one layer per shape in the order each first appears, counts summed, named after the
// first node with how many more share it.
TEST(OnnxOutput, GemmsOfOneShapeAreOneLayer) {
  OnnxGemms g;
  g.model = "m.onnx";
  g.gemms = {{"a", "Conv", 64, 576, 3136, 1, "float32"},  {"b", "MatMul", 16, 8, 16, 12, std::nullopt},
             {"c", "Conv", 64, 576, 3136, 1, "float32"},  {"d", "Conv", 64, 576, 3136, 1, "float32"},
             {"e", "Gemm", 1000, 2048, 1, 1, "float32"}, {"f", "MatMul", 16, 8, 16, 12, std::nullopt}};
  g.ignored = {{"Relu", 3}};
  const Network net = pevp::sweep::onnx_network(g, "m");
  ASSERT_EQ(net.layers.size(), 3u);
  const Gemm want[] = {{"a (+2 more)", 64, 576, 3136, 3}, {"b (+1 more)", 16, 8, 16, 24}, {"e", 1000, 2048, 1, 1}};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(net.layers[i].name, want[i].name);
    EXPECT_EQ(net.layers[i].m, want[i].m);
    EXPECT_EQ(net.layers[i].k, want[i].k);
    EXPECT_EQ(net.layers[i].n, want[i].n);
    EXPECT_EQ(net.layers[i].count, want[i].count);
  }
  EXPECT_EQ(pevp::sweep::ignored_text(net.ignored), "ignored: 3 Relu");
}

// ---------------------------------------------------------------------------------------------------------------
// In a sweep spec

std::string spec_error(const std::string& text, const std::string& dir) {
  try {
    pevp::sweep::parse_spec(text, pevp::sweep::SpecFormat::Toml, dir + "/s.toml", dir);
  } catch (const pevp::sweep::SpecError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(OnnxSpec, AnOnnxWorkloadInTomlAndJsonRelativeToTheSpec) {
  REQUIRE_ONNX();
  // The model path is relative to the spec's folder, as topology files are.
  model("gemm");
  const auto toml = pevp::sweep::parse_spec("[[workload]]\nonnx = \"gemm.onnx\"\nbatch = 4\n",
                                            pevp::sweep::SpecFormat::Toml, models() + "/s.toml", models());
  const auto json = pevp::sweep::parse_spec(R"({"workload": [{"onnx": "gemm.onnx", "batch": 4, "name": "fc"}]})",
                                            pevp::sweep::SpecFormat::Json, models() + "/s.json", models());
  ASSERT_EQ(toml.workloads.size(), 1u);
  EXPECT_EQ(toml.workloads[0].name, "gemm:batch=4");
  EXPECT_EQ(json.workloads[0].name, "fc");
  for (const auto* spec : {&toml, &json}) {
    ASSERT_EQ(spec->workloads[0].layers.size(), 2u);
    EXPECT_EQ(spec->workloads[0].layers[0].n, 4u);  // the batch streamed past the 32 x 64 weights
    EXPECT_EQ(pevp::sweep::total_macs(spec->workloads[0]), 9216u);
  }
}

// `onnx_gemms.py --workload` prints the GEMMs as a `gemms` workload, one per node, that a JSON spec takes as it is:
// gemm.onnx at batch 4 is fc_transb (32 x 64 x 4) and fc_const_a (8 x 32 x 4), 9,216 MACs.
TEST(OnnxSpec, TheScriptPrintsAWorkloadASpecTakes) {
  REQUIRE_ONNX();
  const std::string dir = scratch("workload");
  const Result r = sh("/usr/bin/python3 " + kScript + " " + model("gemm") + " --batch 4 --workload", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto spec = pevp::sweep::parse_spec("{\"workload\": [" + r.out + "]}", pevp::sweep::SpecFormat::Json,
                                            dir + "/s.json", dir);
  ASSERT_EQ(spec.workloads.size(), 1u);
  const Network& net = spec.workloads[0];
  EXPECT_EQ(net.name, "gemm:batch=4");
  ASSERT_EQ(net.layers.size(), 2u);
  EXPECT_EQ(net.layers[0].name, "fc_transb");
  EXPECT_EQ(net.layers[1].name, "fc_const_a");
  EXPECT_EQ(pevp::sweep::total_macs(net), 9216u);
}

TEST(OnnxSpec, RefusalsNameTheWorkload) {
  REQUIRE_ONNX();
  const std::string d = models();
  model("gemm"), model("computed_weight");
  EXPECT_EQ(spec_error("[[workload]]\nonnx = 3\n", d),
            d + "/s.toml: workload[0].onnx: expected a path, got a number");
  EXPECT_EQ(spec_error("[[workload]]\nonnx = \"gemm.onnx\"\nbatch = 0\n", d),
            d + "/s.toml: workload[0].batch: expected a positive integer, got 0");
  EXPECT_EQ(spec_error("[[workload]]\nonnx = \"computed_weight.onnx\"\n", d),
            d + "/s.toml: workload[0]: " + d + "/computed_weight.onnx: node 'conv_runtime_weight' (Conv): the weight "
            "W 'w' is not a constant (an initializer, a Constant node's output, or computed from those alone): a "
            "weight computed at run time is not lowered");
}

// ---------------------------------------------------------------------------------------------------------------
// Through `pe-vp sweep`: gemm.onnx at batch 4 in timing mode. The sweep says what it did not model, and each row is
// one of the model's GEMMs (fc_transb 32 x 64 x 4, fc_const_a 8 x 32 x 4; 9,216 MACs in all).
TEST(OnnxSweep, AnOnnxModelSweptEndToEnd) {
  REQUIRE_ONNX();
  const std::string dir = scratch("sweep");
  fs::copy_file(model("gemm"), dir + "/gemm.onnx");
  const std::string spec = write(dir + "/s.toml",
                                 "name = \"onnx-gemm\"\n[[workload]]\nonnx = \"gemm.onnx\"\nbatch = 4\n"
                                 "[set]\nmode = \"timing\"\n");
  const Result r = sh(std::string(PEVP_CLI) + " sweep " + spec + " --out " + dir + "/out -j 2 --no-plots", dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("pe-vp sweep: onnx-gemm: 2 points (2 distinct), 0 already recorded, 2 to run\n"
                       "  workload gemm:batch=4: ignored: 1 Relu\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2 points: 2 ok, 0 failed, 0 missing"), std::string::npos) << r.out;
  const std::string csv = slurp(dir + "/out/results.csv");
  // key,status,error,workload,layer,count,m,k,n,macs,...
  EXPECT_NE(csv.find(",ok,,gemm:batch=4,fc_transb,1,32,64,4,8192,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",ok,,gemm:batch=4,fc_const_a,1,8,32,4,1024,"), std::string::npos) << csv;
  const nlohmann::json summary = nlohmann::json::parse(slurp(dir + "/out/summary.json"));
  ASSERT_EQ(summary["networks"].size(), 1u);
  EXPECT_EQ(summary["networks"][0]["workload"], "gemm:batch=4");
  EXPECT_DOUBLE_EQ(summary["networks"][0]["macs"].get<double>(), 9216.0);
  EXPECT_GT(summary["networks"][0]["cycles"].get<double>(), 0.0);
}

}  // namespace
