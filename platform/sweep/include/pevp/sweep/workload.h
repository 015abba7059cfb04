// Workloads of `pe-vp sweep`: a network is a list of GEMMs in pe-vp's convention, read from a SCALE-Sim v2
// topology file (conv or GEMM form) or built in (resnet50, bert_base, llama2_7b). Plain C++, no SystemC.
//
// pe-vp's GEMM convention
//   `pe-vp gemm --m M --k K --n N` computes C[M,N] = A[M,K] @ B[K,N] on a weight-stationary engine: A (the
//   weights) is held in the array with M on the array's columns (the output partitions) and K, the contraction,
//   on its rows; B is streamed through the array in time, one of its N columns after another. A Gemm below is
//   one such call, run `count` times.
//
// SCALE-Sim's convolution and its weight-stationary ("ws") mapping
//   (scalesim-project/scale-sim-v2: scalesim/topology_utils.py, scalesim/compute/operand_matrix.py,
//   scalesim/compute/systolic_compute_ws.py)
//   A conv layer is IFMAP Height x IFMAP Width x Channels, Num Filter filters of Filter Height x Filter Width x
//   Channels, one stride for both directions. There is no padding: the topology gives the ifmap already padded.
//     ofmap_h = ceil((ifmap_h - filter_h) / stride) + 1     (SCALE-Sim: ceil((ifmap - filter + stride) / stride))
//     ofmap_w = ceil((ifmap_w - filter_w) / stride) + 1
//   This rounds UP, unlike a framework's floor: when the stride does not divide ifmap - filter, SCALE-Sim counts
//   one more window at the bottom / right edge that hangs over the ifmap, and reads its missing pixels as
//   padding (operand_matrix.py gives them address -1). 224x224 with 7x7/2 is 110x110 (not 109; SCALE-Sim's
//   legacy conv_nets/Resnet50.csv notes Eh = 110), 56x56 with 1x1/2 is 29x29 (not 28). We reproduce it, so a
//   SCALE-Sim topology lowers to the GEMMs SCALE-Sim runs.
//   im2col makes two operands: the ifmap matrix [ofmap_h*ofmap_w x window], window = filter_h*filter_w*channels,
//   and the filter matrix [window x num_filter]. In ws the filter matrix is stationary: the window on the
//   array rows, the filters on the array columns, the ofmap pixels streamed in time. SCALE-Sim calls these
//   M = ofmap pixels, N = filters, K = window (get_transformed_mnk_dimensions).
//
// The mapping onto pe-vp (lower_conv)
//   pe-vp k = window = filter_h * filter_w * channels    (array rows, the contraction;  SCALE-Sim K)
//   pe-vp m = num_filter                                 (array columns, stationary;     SCALE-Sim N)
//   pe-vp n = ofmap_h * ofmap_w                          (streamed in time;               SCALE-Sim M)
//   i.e. A = the filter matrix transposed, B = the ifmap (im2col) matrix transposed, C = the ofmap transposed.
//   MACs are the same as SCALE-Sim's: ofmap_h * ofmap_w * window * num_filter.
//
// SCALE-Sim GEMM topologies ("Layer, M, N, K,") are turned by SCALE-Sim into the conv layer
//   IFMAP M x K, filter 1 x K, 1 channel, N filters, stride 1
// so SCALE-Sim's M is the streamed dimension, N the one on the array columns and K the contraction. In pe-vp
// terms a row "L, M, N, K," is Gemm{m = N, k = K, n = M}: SCALE-Sim's M and N swap names.
//
// What is read from a SCALE-Sim topology file, and how it differs from SCALE-Sim's own reader
//   - Line 1 is the header and is skipped whatever it says, as SCALE-Sim does. A line 1 that looks like a layer
//     (its second field is a number) is an error rather than a silently lost layer.
//   - Blank lines are skipped; so are lines of nothing but commas and whitespace (SCALE-Sim would crash on
//     int('') there; its legacy topologies/conv_nets/Resnet50.csv has one).
//   - Each line is split at commas and every field trimmed of whitespace. SCALE-Sim drops whatever follows the
//     last comma, so its rows end in a comma and may carry a comment after it ("..., 1,#dw"); we do the same.
//     A row that lacks only its trailing comma ("Conv11,28,28,1,1,256,256,1") is accepted with its last field
//     read as the last column: SCALE-Sim v2 crashes on such a row and v3 forks silently read Strides as 1,
//     and SCALE-Sim's own GEMM_mnk/gpt2.csv has no trailing commas at all.
//   - Conv rows need 8 columns: Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels,
//     Num Filter, Strides. GEMM rows need 4: Layer, M, N, K. Columns after these are ignored: SCALE-Sim's
//     optional Sparsity column ("2:4", its sparse mode; pe-vp's engine is dense), legacy extra columns. A
//     separate stride width column (an old v2 convention) is therefore not read: strides are square.
//   - Every number must be a positive decimal integer; a zero, an empty field, a sign or a fraction is a
//     WorkloadError naming the file, the line, the column and the value (SCALE-Sim accepts zero and Python's
//     int() forms such as "+3" or "1_0", and divides by a zero stride). A filter larger than the ifmap is an
//     error, as in SCALE-Sim.
//   - A layer whose name contains "DP" (case-sensitive, anywhere) is depthwise, as in SCALE-Sim: it runs once
//     per channel with 1 channel each. SCALE-Sim lists Channels copies named <name>Channel_<i>; we give one Gemm
//     with count = Channels and k = filter_h * filter_w, the same work.
//   - A file without a single layer is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pevp::sweep {

// Every rejected workload input. what() names the file and line (or the built-in spec), the column or option,
// the value given and the rule broken, e.g.
//   "Resnet18.csv:4: column 8 \"Strides\" = \"0\": must be at least 1".
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One pe-vp GEMM, C[m,n] = A[m,k] @ B[k,n] with A stationary (m on the array columns, k on its rows) and B
// streamed (n), run `count` times in the network (e.g. once per attention head and sequence).
struct Gemm {
  std::string name;
  std::uint64_t m = 0, k = 0, n = 0;
  std::uint64_t count = 1;
};

// Nodes of a framework graph that are no GEMM and were left out (an ONNX model's Relu, Add, Softmax, ...), so a
// report can say what was not modelled.
struct IgnoredOp {
  std::string op;
  std::uint64_t count = 0;
};

struct Network {
  std::string name;
  std::vector<Gemm> layers;
  std::vector<IgnoredOp> ignored;  // empty for topologies, GEMM lists and built-in networks
};

// "ignored: 12 Relu, 3 Add", or "" when nothing was.
std::string ignored_text(const std::vector<IgnoredOp>& ignored);

// A convolution as a SCALE-Sim topology row describes it: the ifmap already padded, one stride for both axes.
// To get a framework's output size (floor) from SCALE-Sim's rounding up, give the padded ifmap trimmed to the
// last row and column a window reaches, (out - 1) * stride + filter: 229, not 230, for ResNet's 7x7/2 stem.
struct ConvLayer {
  std::string name;
  std::uint64_t ifmap_h = 0, ifmap_w = 0;
  std::uint64_t filter_h = 0, filter_w = 0;
  std::uint64_t channels = 0, filters = 0;
  std::uint64_t stride = 1;
};

struct OfmapSize {
  std::uint64_t h = 0, w = 0;
};

// The output size as SCALE-Sim computes it, ceil((ifmap - filter) / stride) + 1 on each axis. WorkloadError when
// a field is zero or the filter is larger than the ifmap.
OfmapSize ofmap_size(const ConvLayer& layer);

// im2col the way SCALE-Sim maps a conv onto a weight-stationary array (see the top of this file):
// m = filters, k = filter_h * filter_w * channels, n = ofmap_h * ofmap_w, count 1.
Gemm lower_conv(const ConvLayer& layer);

// m * k * n * count; WorkloadError when it does not fit in 64 bits.
std::uint64_t macs(const Gemm& gemm);
std::uint64_t total_macs(const Network& network);

enum class TopologyKind { Conv, Gemm };

// Parse a SCALE-Sim topology held in memory. source_name names it in error messages ("Resnet18.csv:4: ...");
// the network is named after it without directory and extension, as SCALE-Sim names its runs.
Network parse_scalesim_conv_topology(std::string_view text, const std::string& source_name);
Network parse_scalesim_gemm_topology(std::string_view text, const std::string& source_name);

// Read and parse a SCALE-Sim topology file (`scale.py -t FILE`, with `-i gemm` for TopologyKind::Gemm), read with
// read_input_file and the limit kMaxInputBytes.
Network read_scalesim_topology(const std::string& path, TopologyKind kind);

// The most a sweep spec or a topology file may hold: a topology of ~300,000 layers or a spec with as many GEMMs, far
// past any network, and small enough that reading it cannot exhaust the host (a link to /dev/zero, a wrong file).
inline constexpr std::size_t kMaxInputBytes = std::size_t{16} << 20;

// The whole file at `path`, read through files::read_file (support/files) with the limit `max_bytes`. A
// WorkloadError names the file and the reason: "<path>: is a directory", "<path>: cannot open: <system reason>",
// "<path>: read error: <system reason>", or "<path>: larger than the <max_bytes>-byte limit for <what>" -- checked
// while reading, so a device or FIFO that never ends is refused too.
std::string read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what);

// The built-in networks, by name: resnet50, bert_base, llama2_7b.
std::vector<std::string> builtin_network_names();

// A built-in network from "name" or "name:key=value,key=value", e.g. "resnet50", "bert_base:seq=512",
// "llama2_7b:seq=2048,batch=4". Options (every value a positive integer):
//   resnet50   batch (1)                 every convolution of ResNet-50 v1.5 at 224x224, and the classifier
//   bert_base  seq (512), batch (1)      one encoder block of BERT-base
//   llama2_7b  seq (2048), batch (1)     one decoder block of Llama 2 7B (prefill of seq tokens)
// The network is named by its spec with every option spelled out in this order ("bert_base:seq=512,batch=1"),
// so one workload has one name. An unknown network or option, or a bad value, is a WorkloadError that lists
// the valid names or options.
Network builtin_network(const std::string& spec);

}  // namespace pevp::sweep
