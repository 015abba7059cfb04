// The workload unit of `pe-vp sweep`: conv lowering (im2col as SCALE-Sim maps it onto a weight-stationary array),
// SCALE-Sim topology files (conv and GEMM form, their quirks, every rejected input with its exact message) and the
// built-in networks (layer shapes, output sizes and MAC counts against hand-derived sums).
//
// Every expectation here is derived by hand in the comments, not by running the code under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "pevp/sweep/workload.h"

namespace pevp::sweep {
namespace {

namespace fs = std::filesystem;

// "name m=.. k=.. n=.. count=..": one string per GEMM so a mismatch shows every field at once.
std::string describe(const Gemm& gemm) {
  return gemm.name + " m=" + std::to_string(gemm.m) + " k=" + std::to_string(gemm.k) + " n=" + std::to_string(gemm.n) +
         " count=" + std::to_string(gemm.count);
}

std::string describe(const std::string& name, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                     std::uint64_t count = 1) {
  Gemm gemm;
  gemm.name = name;
  gemm.m = m;
  gemm.k = k;
  gemm.n = n;
  gemm.count = count;
  return describe(gemm);
}

std::vector<std::string> describe_all(const Network& network) {
  std::vector<std::string> lines;
  for (const Gemm& gemm : network.layers) lines.push_back(describe(gemm));
  return lines;
}

// The message of the WorkloadError `action` throws.
template <typename Action>
std::string workload_error_of(Action&& action) {
  try {
    action();
  } catch (const WorkloadError& error) {
    return error.what();
  }
  return "<no WorkloadError thrown>";
}

ConvLayer conv(const std::string& name, std::uint64_t ifmap_h, std::uint64_t ifmap_w, std::uint64_t filter_h,
               std::uint64_t filter_w, std::uint64_t channels, std::uint64_t filters, std::uint64_t stride) {
  ConvLayer layer;
  layer.name = name;
  layer.ifmap_h = ifmap_h;
  layer.ifmap_w = ifmap_w;
  layer.filter_h = filter_h;
  layer.filter_w = filter_w;
  layer.channels = channels;
  layer.filters = filters;
  layer.stride = stride;
  return layer;
}

// The header line of SCALE-Sim's conv topologies (topologies/conv_nets/*.csv), trailing comma included.
const std::string kConvHeader =
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n";
const std::string kGemmHeader = "Layer, M, N, K,\n";

std::string conv_error(const std::string& rows) {
  return workload_error_of([&] { parse_scalesim_conv_topology(kConvHeader + rows, "net.csv"); });
}

std::string gemm_error(const std::string& rows) {
  return workload_error_of([&] { parse_scalesim_gemm_topology(kGemmHeader + rows, "mm.csv"); });
}

// =============================================================================================================
// Im2col: pe-vp m = filters (array columns), k = filter_h * filter_w * channels (array rows, the contraction),
// n = ofmap_h * ofmap_w (streamed), ofmap = ceil((ifmap - filter) / stride) + 1 as SCALE-Sim computes it.

TEST(Im2col, StrideOneSquare) {
  // 5x5x2 ifmap, six 3x3x2 filters: windows start at 0, 1, 2 on each axis -> 3x3 ofmap.
  const Gemm gemm = lower_conv(conv("c", 5, 5, 3, 3, 2, 6, 1));
  EXPECT_EQ(describe(gemm), describe("c", 6, 3 * 3 * 2, 3 * 3));
  EXPECT_EQ(macs(gemm), 6u * 18u * 9u);  // 972: 9 pixels x 18-long dot products x 6 filters
}

TEST(Im2col, StrideTwoDividesExactly) {
  // ResNet's stem as SCALE-Sim must be given it: 224 padded by 3 is 230, trimmed to the last pixel a window
  // reaches: 111 * 2 + 7 = 229. Windows start at 0, 2, ..., 222: 112 of them.
  const Gemm gemm = lower_conv(conv("stem", 229, 229, 7, 7, 3, 64, 2));
  EXPECT_EQ(describe(gemm), describe("stem", 64, 7 * 7 * 3, 112 * 112));
}

TEST(Im2col, NonSquareStrideTwoCountsTheWindowOverTheEdge) {
  // 10 rows, 3-row filter, stride 2: windows start at rows 0, 2, 4, 6, 8; the one at 8 needs row 10, which does
  // not exist -- SCALE-Sim counts it anyway (ceil) and reads the missing row as padding: 5 rows, not 4.
  // 7 columns, 2-column filter, stride 2: starts 0, 2, 4, 6; the one at 6 needs column 7: 4 columns, not 3.
  const ConvLayer layer = conv("c", 10, 7, 3, 2, 4, 5, 2);
  EXPECT_EQ(ofmap_size(layer).h, 5u);
  EXPECT_EQ(ofmap_size(layer).w, 4u);
  EXPECT_EQ(describe(lower_conv(layer)), describe("c", 5, 3 * 2 * 4, 5 * 4));
}

TEST(Im2col, NonSquareStrideOne) {
  // 6x9 ifmap, 3x4 filter, 8 channels, 16 filters: (6-3)+1 = 4 rows, (9-4)+1 = 6 columns.
  const Gemm gemm = lower_conv(conv("c", 6, 9, 3, 4, 8, 16, 1));
  EXPECT_EQ(describe(gemm), describe("c", 16, 3 * 4 * 8, 4 * 6));
}

TEST(Im2col, MatchesScaleSimsOwnOfmapAnnotation) {
  // SCALE-Sim's legacy topologies/conv_nets/Resnet50.csv gives Conv1 as 224x224, 7x7/2 and notes Eh = Ew = 110:
  // ceil((224 - 7) / 2) + 1 = ceil(108.5) + 1 = 110 (a floor would give 109).
  const OfmapSize size = ofmap_size(conv("Conv1", 224, 224, 7, 7, 3, 64, 2));
  EXPECT_EQ(size.h, 110u);
  EXPECT_EQ(size.w, 110u);
  // And a 1x1/2 projection on 56x56 is 29x29 there: ceil(55 / 2) + 1.
  EXPECT_EQ(ofmap_size(conv("CB3s", 56, 56, 1, 1, 256, 512, 2)).h, 29u);
}

TEST(Im2col, FilterAsLargeAsTheIfmapIsOnePixel) {
  // A fully connected layer written as a conv, as SCALE-Sim's topologies write "FC": 1x1 ifmap, 1x1 filter.
  EXPECT_EQ(describe(lower_conv(conv("fc", 1, 1, 1, 1, 512, 1000, 1))), describe("fc", 1000, 512, 1));
  EXPECT_EQ(describe(lower_conv(conv("whole", 7, 7, 7, 7, 4, 3, 3))), describe("whole", 3, 7 * 7 * 4, 1));
}

TEST(Im2col, RejectsAFilterLargerThanTheIfmap) {
  EXPECT_EQ(workload_error_of([] { lower_conv(conv("big", 5, 5, 7, 3, 1, 1, 1)); }),
            "conv layer \"big\": Filter Height 7 is larger than IFMAP Height 5 (SCALE-Sim does not pad: give the "
            "padded ifmap)");
  EXPECT_EQ(workload_error_of([] { lower_conv(conv("wide", 5, 5, 3, 6, 1, 1, 1)); }),
            "conv layer \"wide\": Filter Width 6 is larger than IFMAP Width 5 (SCALE-Sim does not pad: give the "
            "padded ifmap)");
}

TEST(Im2col, RejectsZeroFields) {
  EXPECT_EQ(workload_error_of([] { lower_conv(conv("z", 5, 5, 3, 3, 0, 1, 1)); }),
            "conv layer \"z\": Channels is 0, must be at least 1");
  EXPECT_EQ(workload_error_of([] { ofmap_size(conv("z", 5, 5, 3, 3, 1, 1, 0)); }),
            "conv layer \"z\": Strides is 0, must be at least 1");
}

TEST(Im2col, MacsOverflowIsAnError) {
  Gemm gemm;
  gemm.name = "huge";
  gemm.m = std::uint64_t{1} << 32;
  gemm.k = std::uint64_t{1} << 31;
  gemm.n = 1;
  gemm.count = 1;
  EXPECT_EQ(macs(gemm), std::uint64_t{1} << 63);
  gemm.count = 2;
  EXPECT_EQ(workload_error_of([&] { macs(gemm); }), "MACs of \"huge\" overflows 64 bits");
}

// =============================================================================================================
// ScaleSimTopology: conv topology files.

// The format of SCALE-Sim's conv_nets / sparsity Resnet18.csv (our own layers): header, trailing commas.
const std::string kRealLookingConvTopology =
    kConvHeader +
    "Stem,229,229,7,7,3,32,2,\n"
    "Block1_a,58,58,3,3,32,32,1,\n"
    "Block2_a,58,58,3,3,32,96,2,\n"
    "Block2_s,56,56,1,1,32,96,2,\n"
    "Head,1,1,1,1,96,10,1,\n";

TEST(ScaleSimTopology, ReadsARealLookingConvFile) {
  const Network network = parse_scalesim_conv_topology(kRealLookingConvTopology, "topologies/tiny_resnet.csv");
  EXPECT_EQ(network.name, "tiny_resnet");  // as SCALE-Sim names a run: the file name without its extension
  const std::vector<std::string> expected = {
      describe("Stem", 32, 7 * 7 * 3, 112 * 112),  // (229 - 7) / 2 + 1 = 112
      describe("Block1_a", 32, 3 * 3 * 32, 56 * 56),  // 58 - 3 + 1 = 56
      describe("Block2_a", 96, 3 * 3 * 32, 29 * 29),  // ceil(55 / 2) + 1 = 29: SCALE-Sim rounds up
      describe("Block2_s", 96, 32, 29 * 29),          // ceil(55 / 2) + 1 = 29
      describe("Head", 10, 96, 1),
  };
  EXPECT_EQ(describe_all(network), expected);
}

TEST(ScaleSimTopology, SkipsBlankLinesAndLinesOfOnlyCommas) {
  // SCALE-Sim's legacy Resnet50.csv has ",,,,,,,,,,,," as line 2; mobilnet_paper.csv has a blank line 2.
  const Network network = parse_scalesim_conv_topology(
      kConvHeader + "\n,,,,,,,,,,,,\n   \nA,5,5,3,3,2,6,1,\n\n\t\nB,4,4,1,1,6,8,1,\n\n", "net.csv");
  EXPECT_EQ(describe_all(network), (std::vector<std::string>{describe("A", 6, 18, 9), describe("B", 8, 6, 16)}));
}

TEST(ScaleSimTopology, TrimsWhitespaceAndCarriageReturns) {
  // Fields padded the way sparsity/conv.csv pads them, CRLF line ends, a tab-indented row (mobilnet_paper.csv).
  const Network network = parse_scalesim_conv_topology(
      "Layer name, IFMAP Height,\r\nCONV_1,     5,   5,  3,   3,  2,   6,   1,\r\n\tCONV_2,5,5,1,1,6,4,1,\r\n", "n.csv");
  EXPECT_EQ(describe_all(network),
            (std::vector<std::string>{describe("CONV_1", 6, 18, 9), describe("CONV_2", 4, 6, 25)}));
}

TEST(ScaleSimTopology, DropsWhatFollowsTheLastComma) {
  // mobilnet_paper.csv writes "Conv2_dw, 112, 112, 3, 3, 1, 1, 1,#dw": SCALE-Sim drops the field after the last
  // comma, which makes it a comment.
  const Network network = parse_scalesim_conv_topology(kConvHeader + "Conv2_dw, 112, 112, 3, 3, 1, 1, 1,#dw\n", "m.csv");
  EXPECT_EQ(describe_all(network), (std::vector<std::string>{describe("Conv2_dw", 1, 9, 110 * 110)}));
}

TEST(ScaleSimTopology, AcceptsARowWithoutItsTrailingComma) {
  // mobilnet_paper.csv has "Conv11,28,28,1,1,256,256,1" (SCALE-Sim v2 crashes on it): the last field is Strides.
  // Stride 2 here, so reading it shows: ceil(27 / 2) + 1 = 15 (a reader that defaulted it to 1 would give 28).
  const Network network =
      parse_scalesim_conv_topology(kConvHeader + "Conv11,28,28,1,1,256,256,2\nConv12,28,28,1,1,256,256,1,\n", "m.csv");
  EXPECT_EQ(describe_all(network), (std::vector<std::string>{describe("Conv11", 256, 256, 15 * 15),
                                                             describe("Conv12", 256, 256, 28 * 28)}));
}

TEST(ScaleSimTopology, IgnoresSparsityAndExtraColumns) {
  // SCALE-Sim's sparsity/conv.csv adds "Sparsity" (N:M) after Strides; the legacy Resnet50.csv carries ",,,110,
  // 110,12100" of notes. The engine is dense: the GEMM is the same as without them.
  const Network network = parse_scalesim_conv_topology(
      "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides, Sparsity,\n"
      "CONV_1,     5,            5,           3,             3,            2,        6,          1,       2:4,\n"
      "Conv1,224,224,7,7,3,64,2,,,110,110,12100\n",
      "s.csv");
  EXPECT_EQ(describe_all(network),
            (std::vector<std::string>{describe("CONV_1", 6, 18, 9), describe("Conv1", 64, 147, 110 * 110)}));
}

TEST(ScaleSimTopology, DepthwiseLayerRunsOncePerChannel) {
  // A name containing "DP" is depthwise in SCALE-Sim: Channels runs of a 1-channel conv (it lists them as
  // <name>Channel_0 ...). 114x114, 3x3, 32 channels, 1 filter: 32 runs of m=1, k=9, n=112*112.
  const Network network = parse_scalesim_conv_topology(kConvHeader + "Conv2_DP,114,114,3,3,32,1,1,\n", "dw.csv");
  EXPECT_EQ(describe_all(network), (std::vector<std::string>{describe("Conv2_DP", 1, 9, 112 * 112, 32)}));
  EXPECT_EQ(total_macs(network), 32u * 9u * 112u * 112u);
  // Only "DP", case-sensitive: "_dw" (as mobilnet_paper.csv names them) is an ordinary conv.
  EXPECT_EQ(parse_scalesim_conv_topology(kConvHeader + "conv_dp,114,114,3,3,32,1,1,\n", "dw.csv").layers[0].count, 1u);
}

TEST(ScaleSimTopology, ReadsAFileFromDisk) {
  const fs::path dir = fs::temp_directory_path() / ("pevp_sweep_workload_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path conv_file = dir / "Tiny.csv";
  const fs::path gemm_file = dir / "mm.csv";
  std::ofstream(conv_file, std::ios::binary) << kRealLookingConvTopology;
  std::ofstream(gemm_file, std::ios::binary) << kGemmHeader << "L1, 100, 200, 300,\n";
  const Network conv_network = read_scalesim_topology(conv_file.string(), TopologyKind::Conv);
  const Network gemm_network = read_scalesim_topology(gemm_file.string(), TopologyKind::Gemm);
  fs::remove_all(dir);
  EXPECT_EQ(conv_network.name, "Tiny");
  EXPECT_EQ(conv_network.layers.size(), 5u);
  EXPECT_EQ(describe_all(gemm_network), (std::vector<std::string>{describe("L1", 200, 300, 100)}));
}

TEST(ScaleSimTopology, MissingFileIsAnError) {
  const std::string path = "/nonexistent/pevp/topology.csv";
  EXPECT_EQ(workload_error_of([&] { read_scalesim_topology(path, TopologyKind::Conv); }), path + ": cannot open: No such file or directory");
}

// A directory opens and reads as nothing: it was reported as a topology with "no layers". Now the file and the
// reason, as for every input file of a sweep.
TEST(ScaleSimTopology, ADirectoryIsNamedAsOne) {
  const std::string dir = ::testing::TempDir() + "/pevp_topology_dir_" + std::to_string(::getpid()) + ".csv";
  fs::create_directories(dir);
  EXPECT_EQ(workload_error_of([&] { read_scalesim_topology(dir, TopologyKind::Gemm); }), dir + ": is a directory");
  fs::remove_all(dir);
}

// A device that never ends (a link to /dev/zero) is refused after the limit, while reading: its size is 0 to stat,
// and reading it whole exhausted the host's memory (std::bad_alloc).
TEST(ScaleSimTopology, AFileIsReadToItsLimitAndNoFurther) {
  const std::string link = ::testing::TempDir() + "/pevp_topology_zero_" + std::to_string(::getpid()) + ".csv";
  fs::remove(link);
  fs::create_symlink("/dev/zero", link);
  EXPECT_EQ(workload_error_of([&] { read_scalesim_topology(link, TopologyKind::Conv); }),
            link + ": larger than the 16777216-byte limit for a SCALE-Sim topology");
  EXPECT_EQ(workload_error_of([&] { read_input_file(link, 100, "a test file"); }),
            link + ": larger than the 100-byte limit for a test file");
  fs::remove(link);
  // Exactly the limit is read; one byte more is refused.
  const std::string file = ::testing::TempDir() + "/pevp_topology_limit_" + std::to_string(::getpid());
  std::ofstream(file, std::ios::binary) << std::string(100, 'x');
  EXPECT_EQ(read_input_file(file, 100, "a test file"), std::string(100, 'x'));
  EXPECT_EQ(workload_error_of([&] { read_input_file(file, 99, "a test file"); }),
            file + ": larger than the 99-byte limit for a test file");
  fs::remove(file);
}

TEST(ScaleSimTopology, RejectsANonIntegerField) {
  EXPECT_EQ(conv_error("A,5,5,3,3,2,6,1,\nB,5,5,3,3,two,6,1,\n"),
            "net.csv:3: column 6 \"Channels\" = \"two\": not a positive integer");
  EXPECT_EQ(conv_error("A,5,5,3,3,2,6,1.5,\n"), "net.csv:2: column 8 \"Strides\" = \"1.5\": not a positive integer");
  // Python's int() would take these; a sign or a digit separator in a topology is a typo.
  EXPECT_EQ(conv_error("A,+5,5,3,3,2,6,1,\n"), "net.csv:2: column 2 \"IFMAP Height\" = \"+5\": not a positive integer");
  EXPECT_EQ(conv_error("A,5,5,3,3,2,-6,1,\n"), "net.csv:2: column 7 \"Num Filter\" = \"-6\": not a positive integer");
  EXPECT_EQ(conv_error("A,5,5_0,3,3,2,6,1,\n"),
            "net.csv:2: column 3 \"IFMAP Width\" = \"5_0\": not a positive integer");
}

TEST(ScaleSimTopology, RejectsAZeroField) {
  // SCALE-Sim divides by a zero stride and counts zero MACs for a zero-sized layer; both are mistakes.
  EXPECT_EQ(conv_error("A,5,5,3,3,2,6,0,\n"), "net.csv:2: column 8 \"Strides\" = \"0\": must be at least 1");
  EXPECT_EQ(conv_error("\nA,5,5,0,3,2,6,1,\n"), "net.csv:3: column 4 \"Filter Height\" = \"0\": must be at least 1");
  EXPECT_EQ(conv_error("A,5,5,3,3,2,000,1,\n"), "net.csv:2: column 7 \"Num Filter\" = \"000\": must be at least 1");
}

TEST(ScaleSimTopology, RejectsAnEmptyField) {
  EXPECT_EQ(conv_error("A,5,,3,3,2,6,1,\n"),
            "net.csv:2: column 3 \"IFMAP Width\" = \"\": empty, expected a positive integer");
  EXPECT_EQ(conv_error("A,5,5,3,3,2,6,,\n"),
            "net.csv:2: column 8 \"Strides\" = \"\": empty, expected a positive integer");
  EXPECT_EQ(conv_error(" ,5,5,3,3,2,6,1,\n"), "net.csv:2: column 1 \"Layer name\" is empty");
}

TEST(ScaleSimTopology, RejectsAValueBeyond64Bits) {
  EXPECT_EQ(conv_error("A,18446744073709551616,5,3,3,2,6,1,\n"),
            "net.csv:2: column 2 \"IFMAP Height\" = \"18446744073709551616\": larger than 18446744073709551615");
}

TEST(ScaleSimTopology, RejectsARowWithTooFewColumns) {
  const std::string columns =
      "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides";
  // The trailing comma is not a column: "A,5,5,3,3,2,6," has 7.
  EXPECT_EQ(conv_error("A,5,5,3,3,2,6,\n"), "net.csv:2: 7 columns, expected 8: " + columns);
  EXPECT_EQ(conv_error("A,5,5,3,3,2,6,1,\nB\n"), "net.csv:3: 1 column, expected 8: " + columns);
}

TEST(ScaleSimTopology, RejectsAFilterLargerThanTheIfmap) {
  EXPECT_EQ(conv_error("A,5,5,3,3,2,6,1,\nConv1,5,9,7,7,3,64,2,\n"),
            "net.csv:3: conv layer \"Conv1\": Filter Height 7 is larger than IFMAP Height 5 (SCALE-Sim does not "
            "pad: give the padded ifmap)");
}

TEST(ScaleSimTopology, RejectsALayerOnLine1) {
  // SCALE-Sim skips line 1 unread: a file without a header would silently lose its first layer.
  EXPECT_EQ(workload_error_of([] { parse_scalesim_conv_topology("Conv1,224,224,7,7,3,64,2,\nB,4,4,1,1,6,8,1,\n", "h.csv"); }),
            "h.csv:1: \"Conv1,224,224,7,7,3,64,2,\" is a layer, but SCALE-Sim skips line 1 as the header: add a "
            "header line");
}

TEST(ScaleSimTopology, RejectsAFileWithoutLayers) {
  const std::string expected = "e.csv: no layers (SCALE-Sim skips line 1 as the header; the other lines are blank)";
  EXPECT_EQ(workload_error_of([] { parse_scalesim_conv_topology("", "e.csv"); }), expected);
  EXPECT_EQ(workload_error_of([] { parse_scalesim_conv_topology(kConvHeader + "\n,,,\n", "e.csv"); }), expected);
  EXPECT_EQ(workload_error_of([] { parse_scalesim_gemm_topology(kGemmHeader, "e.csv"); }), expected);
}

// =============================================================================================================
// ScaleSimGemmTopology: "Layer, M, N, K," rows. SCALE-Sim makes each the conv IFMAP M x K, filter 1 x K,
// 1 channel, N filters, stride 1: M ofmap pixels streamed, N filters on the array columns, K the contraction --
// in pe-vp terms m = N, k = K, n = M.

TEST(ScaleSimGemmTopology, MapsMnkOntoPeVpsConvention) {
  const Network network = parse_scalesim_gemm_topology(
      "Layer Name, M, N, K,\nTest 1, 256, 128, 512,\nL2, 100, 200, 300,\n", "GEMM_mnk/test_mnk_input.csv");
  EXPECT_EQ(network.name, "test_mnk_input");
  EXPECT_EQ(describe_all(network),
            (std::vector<std::string>{describe("Test 1", 128, 512, 256), describe("L2", 200, 300, 100)}));
  EXPECT_EQ(total_macs(network), 256u * 128u * 512u + 100u * 200u * 300u);
}

TEST(ScaleSimGemmTopology, IsTheConvScaleSimBuildsForIt) {
  // The same layer written as SCALE-Sim's internal conv: ifmap M x K = 100 x 300, filter 1 x 300, 1 channel,
  // N = 200 filters, stride 1.
  const Network as_gemm = parse_scalesim_gemm_topology(kGemmHeader + "L, 100, 200, 300,\n", "g.csv");
  const Network as_conv = parse_scalesim_conv_topology(kConvHeader + "L,100,300,1,300,1,200,1,\n", "c.csv");
  EXPECT_EQ(describe_all(as_gemm), describe_all(as_conv));
}

TEST(ScaleSimGemmTopology, AcceptsRowsWithoutTrailingCommasAndASparsityColumn) {
  // SCALE-Sim's own GEMM_mnk/gpt2.csv has no trailing commas ("QKT,1024,1024,64"); v2.0.x adds a Sparsity column.
  const Network network = parse_scalesim_gemm_topology(
      "Layer,M,N,K\nQKT,1024,1024,64\nLinear1,1024,4800,1600\nsparse, 64, 32, 16, 2:4,\n", "gpt2.csv");
  EXPECT_EQ(describe_all(network),
            (std::vector<std::string>{describe("QKT", 1024, 64, 1024), describe("Linear1", 4800, 1600, 1024),
                                      describe("sparse", 32, 16, 64)}));
}

TEST(ScaleSimGemmTopology, RejectsBadRows) {
  EXPECT_EQ(gemm_error("L, 100, 0, 300,\n"), "mm.csv:2: column 3 \"N\" = \"0\": must be at least 1");
  EXPECT_EQ(gemm_error("L, 100, 200, 3e2,\n"), "mm.csv:2: column 4 \"K\" = \"3e2\": not a positive integer");
  EXPECT_EQ(gemm_error("\n\nL, , 200, 300,\n"), "mm.csv:4: column 2 \"M\" = \"\": empty, expected a positive integer");
  EXPECT_EQ(gemm_error("L, 100, 200,\n"), "mm.csv:2: 3 columns, expected 4: Layer, M, N, K");
  EXPECT_EQ(gemm_error(", 100, 200, 300,\n"), "mm.csv:2: column 1 \"Layer\" is empty");
}

// =============================================================================================================
// BuiltinNetworks

TEST(BuiltinNetworks, Names) {
  EXPECT_EQ(builtin_network_names(), (std::vector<std::string>{"resnet50", "bert_base", "llama2_7b"}));
}

TEST(BuiltinNetworks, NamesSpellOutEveryOption) {
  EXPECT_EQ(builtin_network("resnet50").name, "resnet50:batch=1");
  EXPECT_EQ(builtin_network("bert_base:batch=2").name, "bert_base:seq=512,batch=2");
  EXPECT_EQ(builtin_network("llama2_7b: batch = 3 , seq=128").name, "llama2_7b:seq=128,batch=3");
}

// ResNet-50 v1.5 at 224: the stem, 16 bottlenecks (3 + 4 + 6 + 3) of three convs, 4 projections = 53 convs, + fc.
TEST(BuiltinNetworks, ResNet50HasEveryConvolutionAndTheClassifier) {
  const Network network = builtin_network("resnet50");
  ASSERT_EQ(network.layers.size(), 53u + 1u);
  EXPECT_EQ(describe(network.layers.front()), describe("conv1", 64, 7 * 7 * 3, 112 * 112));
  EXPECT_EQ(describe(network.layers[1]), describe("conv2_1_a", 64, 64, 56 * 56));
  EXPECT_EQ(describe(network.layers[12]), describe("conv3_1_b", 128, 3 * 3 * 128, 28 * 28));  // the v1.5 stride
  EXPECT_EQ(describe(network.layers[14]), describe("conv3_1_proj", 512, 256, 28 * 28));
  EXPECT_EQ(describe(network.layers.back()), describe("fc", 1000, 2048, 1));
}

// The output side of every ResNet-50 conv, from the paper's Table 1: conv1 112, conv2_x 56, conv3_x 28, conv4_x
// 14, conv5_x 7 -- except the first 1x1 of stages 3 to 5, which in v1.5 still runs at the previous resolution.
std::uint64_t resnet50_output_side(const std::string& name) {
  if (name == "conv1") return 112;
  if (name == "conv3_1_a") return 56;
  if (name == "conv4_1_a") return 28;
  if (name == "conv5_1_a") return 14;
  const std::uint64_t sides[] = {56, 28, 14, 7};
  return sides[name.at(4) - '2'];  // "convS_..."
}

TEST(BuiltinNetworks, ResNet50OutputSizesAreTheRealNetworks) {
  const Network network = builtin_network("resnet50");
  for (const Gemm& gemm : network.layers) {
    if (gemm.name == "fc") continue;
    const std::uint64_t side = resnet50_output_side(gemm.name);
    EXPECT_EQ(gemm.n, side * side) << gemm.name;
  }
}

// pixels x window x filters for a conv with a square output.
constexpr std::uint64_t conv_macs(std::uint64_t output_side, std::uint64_t window, std::uint64_t filters) {
  return output_side * output_side * window * filters;
}

TEST(BuiltinNetworks, ResNet50MacsMatchAHandSumByStage) {
  // Each stage: block 1 (a, b, c) and its projection, then the identity blocks (a, b, c).
  constexpr std::uint64_t stem = conv_macs(112, 7 * 7 * 3, 64);
  constexpr std::uint64_t stage2 = conv_macs(56, 64, 64) + conv_macs(56, 9 * 64, 64) + conv_macs(56, 64, 256) +
                                   conv_macs(56, 64, 256) +
                                   2 * (conv_macs(56, 256, 64) + conv_macs(56, 9 * 64, 64) + conv_macs(56, 64, 256));
  constexpr std::uint64_t stage3 =
      conv_macs(56, 256, 128) + conv_macs(28, 9 * 128, 128) + conv_macs(28, 128, 512) + conv_macs(28, 256, 512) +
      3 * (conv_macs(28, 512, 128) + conv_macs(28, 9 * 128, 128) + conv_macs(28, 128, 512));
  constexpr std::uint64_t stage4 =
      conv_macs(28, 512, 256) + conv_macs(14, 9 * 256, 256) + conv_macs(14, 256, 1024) + conv_macs(14, 512, 1024) +
      5 * (conv_macs(14, 1024, 256) + conv_macs(14, 9 * 256, 256) + conv_macs(14, 256, 1024));
  constexpr std::uint64_t stage5 =
      conv_macs(14, 1024, 512) + conv_macs(7, 9 * 512, 512) + conv_macs(7, 512, 2048) + conv_macs(7, 1024, 2048) +
      2 * (conv_macs(7, 2048, 512) + conv_macs(7, 9 * 512, 512) + conv_macs(7, 512, 2048));
  // The same sums worked out on paper.
  static_assert(stem == 118'013'952);
  static_assert(stage2 == 667'942'912);
  static_assert(stage3 == 1'027'604'480);
  static_assert(stage4 == 1'464'336'384);
  static_assert(stage5 == 809'238'528);
  constexpr std::uint64_t convolutions = stem + stage2 + stage3 + stage4 + stage5;
  static_assert(convolutions == 4'087'136'256);  // the ~4.1 GMACs usually quoted for ResNet-50
  constexpr std::uint64_t classifier = 2048 * 1000;

  const Network network = builtin_network("resnet50");
  std::uint64_t network_convolutions = 0;
  for (const Gemm& gemm : network.layers)
    if (gemm.name != "fc") network_convolutions += macs(gemm);
  EXPECT_EQ(network_convolutions, convolutions);
  EXPECT_EQ(total_macs(network), convolutions + classifier);  // 4'089'184'256
}

TEST(BuiltinNetworks, ResNet50BatchMultipliesTheStreamedDimension) {
  const Network one = builtin_network("resnet50");
  const Network four = builtin_network("resnet50:batch=4");
  ASSERT_EQ(four.layers.size(), one.layers.size());
  for (std::size_t i = 0; i < one.layers.size(); ++i) {
    EXPECT_EQ(four.layers[i].m, one.layers[i].m) << one.layers[i].name;
    EXPECT_EQ(four.layers[i].k, one.layers[i].k) << one.layers[i].name;
    EXPECT_EQ(four.layers[i].n, 4 * one.layers[i].n) << one.layers[i].name;
  }
  EXPECT_EQ(describe(four.layers.back()), describe("fc", 1000, 2048, 4));
  EXPECT_EQ(total_macs(four), 4 * total_macs(one));
}

TEST(BuiltinNetworks, BertBaseEncoderBlock) {
  // Tokens streamed past the stationary weights (n = seq * batch); attention per head and sequence with keys
  // (scores) and values (context) stationary.
  const Network network = builtin_network("bert_base");
  const std::vector<std::string> expected = {
      describe("q_proj", 768, 768, 512),          describe("k_proj", 768, 768, 512),
      describe("v_proj", 768, 768, 512),          describe("attn_scores", 512, 64, 512, 12),
      describe("attn_context", 64, 512, 512, 12), describe("out_proj", 768, 768, 512),
      describe("ffn_up", 3072, 768, 512),         describe("ffn_down", 768, 3072, 512),
  };
  EXPECT_EQ(describe_all(network), expected);
}

// Per block: every token goes through 4 d x d projections and the d -> ffn -> d network; every sequence through
// two seq x seq x head_dim products per head.
constexpr std::uint64_t bert_block_macs(std::uint64_t seq, std::uint64_t batch) {
  constexpr std::uint64_t d = 768, ffn = 3072, heads = 12, head_dim = 64;
  return seq * batch * (4 * d * d + 2 * d * ffn) + batch * heads * 2 * seq * seq * head_dim;
}

TEST(BuiltinNetworks, BertBaseMacsPerBlock) {
  // seq 512: 512 * 7'077'888 + 12 * 2 * 512^2 * 64 = 3'623'878'656 + 402'653'184.
  static_assert(bert_block_macs(512, 1) == 4'026'531'840);
  EXPECT_EQ(total_macs(builtin_network("bert_base")), bert_block_macs(512, 1));
  EXPECT_EQ(total_macs(builtin_network("bert_base:seq=128,batch=2")), bert_block_macs(128, 2));
  EXPECT_EQ(builtin_network("bert_base:seq=128,batch=2").layers[3].count, 24u);  // 12 heads x 2 sequences
}

TEST(BuiltinNetworks, Llama2_7bDecoderBlock) {
  const Network network = builtin_network("llama2_7b");
  const std::vector<std::string> expected = {
      describe("q_proj", 4096, 4096, 2048),
      describe("k_proj", 4096, 4096, 2048),
      describe("v_proj", 4096, 4096, 2048),
      describe("attn_scores", 2048, 128, 2048, 32),
      describe("attn_context", 128, 2048, 2048, 32),
      describe("o_proj", 4096, 4096, 2048),
      describe("gate_proj", 11008, 4096, 2048),
      describe("up_proj", 11008, 4096, 2048),
      describe("down_proj", 4096, 11008, 2048),
  };
  EXPECT_EQ(describe_all(network), expected);
}

constexpr std::uint64_t llama2_7b_block_macs(std::uint64_t seq, std::uint64_t batch) {
  constexpr std::uint64_t d = 4096, ffn = 11008, heads = 32, head_dim = 128;
  return seq * batch * (4 * d * d + 3 * d * ffn) + batch * heads * 2 * seq * seq * head_dim;
}

TEST(BuiltinNetworks, Llama2_7bMacsPerBlock) {
  // seq 2048: 2048 * 202'375'168 + 32 * 2 * 2048^2 * 128 = 414'464'344'064 + 34'359'738'368.
  static_assert(llama2_7b_block_macs(2048, 1) == 448'824'082'432);
  EXPECT_EQ(total_macs(builtin_network("llama2_7b")), llama2_7b_block_macs(2048, 1));
  EXPECT_EQ(total_macs(builtin_network("llama2_7b:seq=512,batch=8")), llama2_7b_block_macs(512, 8));
}

TEST(BuiltinNetworks, RejectsAnUnknownNetwork) {
  EXPECT_EQ(workload_error_of([] { builtin_network("resnet18"); }),
            "unknown built-in network \"resnet18\"; valid: resnet50, bert_base, llama2_7b");
  EXPECT_EQ(workload_error_of([] { builtin_network(""); }),
            "unknown built-in network \"\"; valid: resnet50, bert_base, llama2_7b");
}

TEST(BuiltinNetworks, RejectsAnUnknownOption) {
  EXPECT_EQ(workload_error_of([] { builtin_network("resnet50:seq=512"); }),
            "built-in network \"resnet50\": unknown option \"seq\"; valid: batch");
  EXPECT_EQ(workload_error_of([] { builtin_network("bert_base:heads=16"); }),
            "built-in network \"bert_base\": unknown option \"heads\"; valid: seq, batch");
}

TEST(BuiltinNetworks, RejectsABadValue) {
  EXPECT_EQ(workload_error_of([] { builtin_network("bert_base:seq=12x"); }),
            "built-in network \"bert_base\": option seq = \"12x\": not a positive integer");
  EXPECT_EQ(workload_error_of([] { builtin_network("llama2_7b:batch=0"); }),
            "built-in network \"llama2_7b\": option batch = \"0\": must be at least 1");
  EXPECT_EQ(workload_error_of([] { builtin_network("bert_base:seq="); }),
            "built-in network \"bert_base\": option seq = \"\": empty, expected a positive integer");
}

TEST(BuiltinNetworks, RejectsMalformedOptions) {
  EXPECT_EQ(workload_error_of([] { builtin_network("bert_base:seq"); }),
            "built-in network \"bert_base\": option \"seq\" has no value; write seq=<value>");
  EXPECT_EQ(workload_error_of([] { builtin_network("bert_base:seq=1,seq=2"); }),
            "built-in network \"bert_base\": option \"seq\" given twice");
  const std::string empty =
      "built-in network \"bert_base\": empty option; write bert_base:key=value,key=value (options: seq, batch)";
  EXPECT_EQ(workload_error_of([] { builtin_network("bert_base:"); }), empty);
  EXPECT_EQ(workload_error_of([] { builtin_network("bert_base:seq=128,"); }), empty);
}

TEST(BuiltinNetworks, RejectsSizesThatOverflow) {
  EXPECT_EQ(workload_error_of([] { builtin_network("llama2_7b:seq=4294967296,batch=4294967296"); }),
            "built-in network \"llama2_7b:seq=4294967296,batch=4294967296\": seq x batch overflows 64 bits");
}

}  // namespace
}  // namespace pevp::sweep
