// Workloads of `pe-vp sweep`: conv lowering, SCALE-Sim topology files and the built-in networks. The conventions
// and every SCALE-Sim quirk reproduced here are described at the top of workload.h.
#include "pevp/sweep/workload.h"

#include "pevp/files/input_file.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

namespace pevp::sweep {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Text helpers

std::string in_quotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string text;
  for (const std::string& item : items) {
    if (!text.empty()) text += separator;
    text += item;
  }
  return text;
}

// Why a field is not a positive decimal integer, or "" when it is one. Deliberately stricter than Python's int():
// no sign, no underscores, no zero -- each of those in a topology is a typo, not a layer.
std::string positive_integer_violation(std::string_view text, std::uint64_t& value) {
  if (text.empty()) return "empty, expected a positive integer";
  value = 0;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (const char c : text) {
    if (c < '0' || c > '9') return "not a positive integer";
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (kMax - digit) / 10) return "larger than " + std::to_string(kMax);
    value = value * 10 + digit;
  }
  if (value == 0) return "must be at least 1";
  return "";
}

// ---------------------------------------------------------------------------------------------------------------
// Checked arithmetic: a MAC count or a streamed dimension that wraps would be a silently wrong sweep result.

std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) throw WorkloadError(what + " overflows 64 bits");
  return product;
}

std::uint64_t checked_sum(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) throw WorkloadError(what + " overflows 64 bits");
  return sum;
}

// ---------------------------------------------------------------------------------------------------------------
// Conv layers

std::string conv_label(const ConvLayer& layer) { return "conv layer " + in_quotes(layer.name); }

void require_positive(const ConvLayer& layer, std::string_view column, std::uint64_t value) {
  if (value == 0) throw WorkloadError(conv_label(layer) + ": " + std::string(column) + " is 0, must be at least 1");
}

void require_filter_fits(const ConvLayer& layer, std::string_view axis, std::uint64_t filter, std::uint64_t ifmap) {
  if (filter <= ifmap) return;
  throw WorkloadError(conv_label(layer) + ": Filter " + std::string(axis) + " " + std::to_string(filter) +
                      " is larger than IFMAP " + std::string(axis) + " " + std::to_string(ifmap) +
                      " (SCALE-Sim does not pad: give the padded ifmap)");
}

// SCALE-Sim's ceil((ifmap - filter + stride) / stride): ceil((ifmap - filter) / stride) + 1, a last window that
// hangs over the edge included. Written in integers so it cannot overflow (ifmap >= filter, stride >= 1).
std::uint64_t windows_along(std::uint64_t ifmap, std::uint64_t filter, std::uint64_t stride) {
  const std::uint64_t span = ifmap - filter;
  return span / stride + (span % stride != 0 ? 1 : 0) + 1;
}

void validate_conv(const ConvLayer& layer) {
  require_positive(layer, "IFMAP Height", layer.ifmap_h);
  require_positive(layer, "IFMAP Width", layer.ifmap_w);
  require_positive(layer, "Filter Height", layer.filter_h);
  require_positive(layer, "Filter Width", layer.filter_w);
  require_positive(layer, "Channels", layer.channels);
  require_positive(layer, "Num Filter", layer.filters);
  require_positive(layer, "Strides", layer.stride);
  require_filter_fits(layer, "Height", layer.filter_h, layer.ifmap_h);
  require_filter_fits(layer, "Width", layer.filter_w, layer.ifmap_w);
}

// ---------------------------------------------------------------------------------------------------------------
// SCALE-Sim topology files

// Column names as SCALE-Sim's own topology headers spell them.
constexpr std::array<std::string_view, 8> kConvColumns = {"Layer name",   "IFMAP Height",  "IFMAP Width",
                                                          "Filter Height", "Filter Width", "Channels",
                                                          "Num Filter",   "Strides"};
constexpr std::array<std::string_view, 4> kGemmColumns = {"Layer", "M", "N", "K"};

struct TopologyLine {
  std::size_t number = 0;  // 1-based, as an editor shows it
  std::string_view text;
};

// The place every topology error is reported at: "Resnet18.csv:4".
struct SourceLine {
  const std::string& source;
  std::size_t number;

  [[noreturn]] void fail(const std::string& message) const {
    throw WorkloadError(source + ":" + std::to_string(number) + ": " + message);
  }
};

std::vector<TopologyLine> physical_lines(std::string_view text) {
  std::vector<TopologyLine> lines;
  std::size_t number = 1;
  for (std::string_view line : split(text, '\n')) lines.push_back({number++, line});
  // A final newline ends the last line; it does not start another one.
  if (lines.size() > 1 && lines.back().text.empty()) lines.pop_back();
  return lines;
}

bool carries_no_layer(std::string_view line) {
  for (const std::string_view field : split(line, ','))
    if (!trimmed(field).empty()) return false;
  return true;
}

// SCALE-Sim always skips line 1 as the header; a file whose line 1 is a layer would lose that layer silently.
void require_header(const TopologyLine& first, const std::string& source) {
  const std::vector<std::string_view> fields = split(first.text, ',');
  std::uint64_t ignored = 0;
  if (fields.size() < 2 || !positive_integer_violation(trimmed(fields[1]), ignored).empty()) return;
  SourceLine{source, first.number}.fail(in_quotes(trimmed(first.text)) +
                                        " is a layer, but SCALE-Sim skips line 1 as the header: add a header line");
}

// The lines that describe layers: all but the header, blank lines and lines of nothing but commas.
std::vector<TopologyLine> layer_lines(std::string_view text, const std::string& source) {
  std::vector<TopologyLine> lines = physical_lines(text);
  if (lines.empty()) return lines;
  require_header(lines.front(), source);
  std::vector<TopologyLine> layers;
  for (auto line = std::next(lines.begin()); line != lines.end(); ++line)
    if (!carries_no_layer(line->text)) layers.push_back(*line);
  return layers;
}

// The first columns.size() fields of a row, trimmed. A trailing comma leaves an empty last field, which SCALE-Sim
// drops like anything else after the last comma; fields beyond the named columns are ignored (workload.h).
template <std::size_t N>
std::array<std::string_view, N> row_fields(const TopologyLine& line, const std::string& source,
                                           const std::array<std::string_view, N>& columns) {
  std::vector<std::string_view> fields = split(line.text, ',');
  if (trimmed(fields.back()).empty()) fields.pop_back();
  if (fields.size() < N) {
    std::vector<std::string> names(columns.begin(), columns.end());
    SourceLine{source, line.number}.fail(std::to_string(fields.size()) + (fields.size() == 1 ? " column" : " columns") +
                                         ", expected " + std::to_string(N) + ": " + joined(names, ", "));
  }
  std::array<std::string_view, N> row{};
  for (std::size_t i = 0; i < N; ++i) row[i] = trimmed(fields[i]);
  return row;
}

std::string column_label(std::size_t index, std::string_view name) {
  return "column " + std::to_string(index + 1) + " " + in_quotes(name);
}

template <std::size_t N>
std::string layer_name(const std::array<std::string_view, N>& row, const SourceLine& at,
                       const std::array<std::string_view, N>& columns) {
  if (row[0].empty()) at.fail(column_label(0, columns[0]) + " is empty");
  return std::string(row[0]);
}

template <std::size_t N>
std::uint64_t positive_column(const std::array<std::string_view, N>& row, std::size_t index, const SourceLine& at,
                              const std::array<std::string_view, N>& columns) {
  std::uint64_t value = 0;
  const std::string violation = positive_integer_violation(row[index], value);
  if (!violation.empty()) at.fail(column_label(index, columns[index]) + " = " + in_quotes(row[index]) + ": " + violation);
  return value;
}

// lower_conv's own error ("conv layer ...: Filter Height 7 is larger ...") with the file and line in front.
Gemm lower_conv_at(const ConvLayer& layer, const SourceLine& at) {
  try {
    return lower_conv(layer);
  } catch (const WorkloadError& error) {
    at.fail(error.what());
  }
}

bool is_depthwise(const std::string& layer_name) { return layer_name.find("DP") != std::string::npos; }

Gemm conv_row_to_gemm(const TopologyLine& line, const std::string& source) {
  const SourceLine at{source, line.number};
  const auto row = row_fields(line, source, kConvColumns);
  ConvLayer layer;
  layer.name = layer_name(row, at, kConvColumns);
  layer.ifmap_h = positive_column(row, 1, at, kConvColumns);
  layer.ifmap_w = positive_column(row, 2, at, kConvColumns);
  layer.filter_h = positive_column(row, 3, at, kConvColumns);
  layer.filter_w = positive_column(row, 4, at, kConvColumns);
  layer.channels = positive_column(row, 5, at, kConvColumns);
  layer.filters = positive_column(row, 6, at, kConvColumns);
  layer.stride = positive_column(row, 7, at, kConvColumns);
  if (!is_depthwise(layer.name)) return lower_conv_at(layer, at);
  // SCALE-Sim runs a depthwise layer once per channel, each run with a single channel.
  const std::uint64_t runs = layer.channels;
  layer.channels = 1;
  Gemm gemm = lower_conv_at(layer, at);
  gemm.count = runs;
  return gemm;
}

Gemm gemm_row_to_gemm(const TopologyLine& line, const std::string& source) {
  const SourceLine at{source, line.number};
  const auto row = row_fields(line, source, kGemmColumns);
  const std::string name = layer_name(row, at, kGemmColumns);
  const std::uint64_t m = positive_column(row, 1, at, kGemmColumns);
  const std::uint64_t n = positive_column(row, 2, at, kGemmColumns);
  const std::uint64_t k = positive_column(row, 3, at, kGemmColumns);
  // The conv layer SCALE-Sim builds for a GEMM row, lowered the same way as every conv row, so the two forms of
  // topology cannot drift apart: it comes out as m = N, k = K, n = M.
  ConvLayer as_conv;
  as_conv.name = name;
  as_conv.ifmap_h = m;
  as_conv.ifmap_w = k;
  as_conv.filter_h = 1;
  as_conv.filter_w = k;
  as_conv.channels = 1;
  as_conv.filters = n;
  as_conv.stride = 1;
  return lower_conv_at(as_conv, at);
}

std::string network_name_of(const std::string& source) { return std::filesystem::path(source).stem().string(); }

using RowToGemm = Gemm (*)(const TopologyLine&, const std::string&);

Network parse_topology(std::string_view text, const std::string& source, RowToGemm row_to_gemm) {
  Network network{network_name_of(source), {}, {}};
  for (const TopologyLine& line : layer_lines(text, source)) network.layers.push_back(row_to_gemm(line, source));
  if (network.layers.empty())
    throw WorkloadError(source + ": no layers (SCALE-Sim skips line 1 as the header; the other lines are blank)");
  return network;
}

}  // namespace

std::string read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  // Through pe-vp's one reader of user files (support/files), with the sweep's own limit: a directory, a missing or
  // unreadable file and one past the limit are named there, the limit checked while reading (a regular file from its
  // size, a device such as /dev/zero once the limit is passed).
  std::string error;
  std::optional<std::string> text = files::read_file(path, &error, files::InputKind{what.c_str(), max_bytes});
  if (!text) throw WorkloadError(error);
  return std::move(*text);
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// ResNet-50

// One convolution of a network as its paper or framework describes it: a square input of `input` pixels a side,
// `padding` zero pixels added on every side, a square filter.
struct FrameworkConv {
  const char* name;
  std::uint64_t input, filter, channels, filters, stride, padding;
};

// ResNet-50 v1.5 (He et al. 2015, "Deep Residual Learning for Image Recognition", Table 1; v1.5, as in torchvision
// and the MLPerf reference, puts the stride 2 of a stage's first block in its 3x3 conv, not its first 1x1), 224x224
// input. The 7x7 stem pads 3, every 3x3 pads 1, the 1x1s pad 0; outputs are 112, 56, 28, 14 and 7. Each stage's
// first block also has the 1x1 projection shortcut ("_proj"). The 3x3/2 max pool and the global average pool are
// no GEMMs and are left out.
constexpr FrameworkConv kResNet50Convolutions[] = {
    {"conv1", 224, 7, 3, 64, 2, 3},
    // conv2_x: 56x56, 3 blocks 64 -> 64 -> 256
    {"conv2_1_a", 56, 1, 64, 64, 1, 0},
    {"conv2_1_b", 56, 3, 64, 64, 1, 1},
    {"conv2_1_c", 56, 1, 64, 256, 1, 0},
    {"conv2_1_proj", 56, 1, 64, 256, 1, 0},
    {"conv2_2_a", 56, 1, 256, 64, 1, 0},
    {"conv2_2_b", 56, 3, 64, 64, 1, 1},
    {"conv2_2_c", 56, 1, 64, 256, 1, 0},
    {"conv2_3_a", 56, 1, 256, 64, 1, 0},
    {"conv2_3_b", 56, 3, 64, 64, 1, 1},
    {"conv2_3_c", 56, 1, 64, 256, 1, 0},
    // conv3_x: 28x28, 4 blocks 128 -> 128 -> 512
    {"conv3_1_a", 56, 1, 256, 128, 1, 0},
    {"conv3_1_b", 56, 3, 128, 128, 2, 1},
    {"conv3_1_c", 28, 1, 128, 512, 1, 0},
    {"conv3_1_proj", 56, 1, 256, 512, 2, 0},
    {"conv3_2_a", 28, 1, 512, 128, 1, 0},
    {"conv3_2_b", 28, 3, 128, 128, 1, 1},
    {"conv3_2_c", 28, 1, 128, 512, 1, 0},
    {"conv3_3_a", 28, 1, 512, 128, 1, 0},
    {"conv3_3_b", 28, 3, 128, 128, 1, 1},
    {"conv3_3_c", 28, 1, 128, 512, 1, 0},
    {"conv3_4_a", 28, 1, 512, 128, 1, 0},
    {"conv3_4_b", 28, 3, 128, 128, 1, 1},
    {"conv3_4_c", 28, 1, 128, 512, 1, 0},
    // conv4_x: 14x14, 6 blocks 256 -> 256 -> 1024
    {"conv4_1_a", 28, 1, 512, 256, 1, 0},
    {"conv4_1_b", 28, 3, 256, 256, 2, 1},
    {"conv4_1_c", 14, 1, 256, 1024, 1, 0},
    {"conv4_1_proj", 28, 1, 512, 1024, 2, 0},
    {"conv4_2_a", 14, 1, 1024, 256, 1, 0},
    {"conv4_2_b", 14, 3, 256, 256, 1, 1},
    {"conv4_2_c", 14, 1, 256, 1024, 1, 0},
    {"conv4_3_a", 14, 1, 1024, 256, 1, 0},
    {"conv4_3_b", 14, 3, 256, 256, 1, 1},
    {"conv4_3_c", 14, 1, 256, 1024, 1, 0},
    {"conv4_4_a", 14, 1, 1024, 256, 1, 0},
    {"conv4_4_b", 14, 3, 256, 256, 1, 1},
    {"conv4_4_c", 14, 1, 256, 1024, 1, 0},
    {"conv4_5_a", 14, 1, 1024, 256, 1, 0},
    {"conv4_5_b", 14, 3, 256, 256, 1, 1},
    {"conv4_5_c", 14, 1, 256, 1024, 1, 0},
    {"conv4_6_a", 14, 1, 1024, 256, 1, 0},
    {"conv4_6_b", 14, 3, 256, 256, 1, 1},
    {"conv4_6_c", 14, 1, 256, 1024, 1, 0},
    // conv5_x: 7x7, 3 blocks 512 -> 512 -> 2048
    {"conv5_1_a", 14, 1, 1024, 512, 1, 0},
    {"conv5_1_b", 14, 3, 512, 512, 2, 1},
    {"conv5_1_c", 7, 1, 512, 2048, 1, 0},
    {"conv5_1_proj", 14, 1, 1024, 2048, 2, 0},
    {"conv5_2_a", 7, 1, 2048, 512, 1, 0},
    {"conv5_2_b", 7, 3, 512, 512, 1, 1},
    {"conv5_2_c", 7, 1, 512, 2048, 1, 0},
    {"conv5_3_a", 7, 1, 2048, 512, 1, 0},
    {"conv5_3_b", 7, 3, 512, 512, 1, 1},
    {"conv5_3_c", 7, 1, 512, 2048, 1, 0},
};
// The stem, 16 bottlenecks of three convs and 4 projections.
static_assert(std::size(kResNet50Convolutions) == 1 + 16 * 3 + 4);

constexpr std::uint64_t kResNet50Features = 2048;  // the classifier's input: conv5's channels after the pool
constexpr std::uint64_t kImageNetClasses = 1000;

// The SCALE-Sim layer of a framework conv. The framework's output is floor((input + 2 * padding - filter) / stride)
// + 1; SCALE-Sim rounds up (ofmap_size), so the ifmap it is given is the padded input trimmed to the last row and
// column a window reaches -- the rows and columns a framework's floor drops. 7x7/2 at 224 padded 3: 229, not 230.
ConvLayer to_scalesim_layer(const FrameworkConv& conv) {
  const std::uint64_t output = (conv.input + 2 * conv.padding - conv.filter) / conv.stride + 1;
  const std::uint64_t reached = (output - 1) * conv.stride + conv.filter;
  ConvLayer layer;
  layer.name = conv.name;
  layer.ifmap_h = layer.ifmap_w = reached;
  layer.filter_h = layer.filter_w = conv.filter;
  layer.channels = conv.channels;
  layer.filters = conv.filters;
  layer.stride = conv.stride;
  return layer;
}

Gemm make_gemm(std::string name, std::uint64_t m, std::uint64_t k, std::uint64_t n, std::uint64_t count = 1) {
  Gemm gemm;
  gemm.name = std::move(name);
  gemm.m = m;
  gemm.k = k;
  gemm.n = n;
  gemm.count = count;
  return gemm;
}

using OptionValues = std::map<std::string, std::uint64_t, std::less<>>;

// A batch of images streams batch times as many pixels past the same stationary filters.
std::vector<Gemm> resnet50_layers(const OptionValues& options) {
  const std::uint64_t batch = options.at("batch");
  std::vector<Gemm> layers;
  for (const FrameworkConv& conv : kResNet50Convolutions) {
    Gemm gemm = lower_conv(to_scalesim_layer(conv));
    gemm.n = checked_product(gemm.n, batch, "layer " + gemm.name + ": ofmap pixels x batch");
    layers.push_back(gemm);
  }
  // The classifier: weights [1000 x 2048] stationary, one pooled feature vector streamed per image.
  layers.push_back(make_gemm("fc", kImageNetClasses, kResNet50Features, batch));
  return layers;
}

// ---------------------------------------------------------------------------------------------------------------
// Transformer blocks

struct TransformerShape {
  std::uint64_t model_dim;   // hidden size
  std::uint64_t heads;       // attention heads (query heads = key/value heads: no grouped-query attention)
  std::uint64_t head_dim;    // model_dim / heads
  std::uint64_t ffn_dim;     // the feed-forward network's inner size
  bool gated_ffn;            // SwiGLU: gate and up projections, then down; otherwise up, then down
  const char* output_name;   // the attention output projection, as the model's reference code names it
};

// BERT-base (Devlin et al. 2018, "BERT: Pre-training of Deep Bidirectional Transformers ...": L=12, H=768, A=12,
// feed-forward 4H = 3072, GELU).
constexpr TransformerShape kBertBase{768, 12, 64, 3072, false, "out_proj"};
// Llama 2 7B (Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned Chat Models"; 7B: 32 layers, d=4096,
// 32 heads of 128 with full multi-head attention, SwiGLU feed-forward of 11008).
constexpr TransformerShape kLlama2_7B{4096, 32, 128, 11008, true, "o_proj"};

// One block at `seq` tokens per sequence and `batch` sequences. Projections and the feed-forward network hold
// their weight matrix [out x in] stationary and stream every token of the batch (n = seq * batch).
//
// Attention has no weights, so one activation must play the stationary role. We hold the keys and the values:
// they are the operands a decode step keeps resident (the KV cache), and every streamed query reuses them.
//   scores  = K_h Q_h^T: A = K_h [seq x head_dim] stationary, the queries streamed -> m = seq, k = head_dim,
//             n = seq. (Q stationary would give the same shape here, queries and keys being equally many.)
//   context = V_h^T P^T: A = V_h^T [head_dim x seq] stationary, the softmax rows streamed -> m = head_dim,
//             k = seq, n = seq. This leaves the array columns beyond head_dim idle, a cost the sweep should show;
//             P stationary instead would stream only head_dim vectors past seq x seq weights per head.
// Both run once per head and sequence (count = heads * batch). The full seq x seq scores are computed, causal
// mask or not: a dense engine does not skip the masked half.
std::vector<Gemm> transformer_block(const TransformerShape& shape, const OptionValues& options) {
  const std::uint64_t seq = options.at("seq");
  const std::uint64_t batch = options.at("batch");
  const std::uint64_t tokens = checked_product(seq, batch, "seq x batch");
  const std::uint64_t head_runs = checked_product(shape.heads, batch, "heads x batch");
  const std::uint64_t d = shape.model_dim;
  std::vector<Gemm> layers = {
      make_gemm("q_proj", d, d, tokens),
      make_gemm("k_proj", d, d, tokens),
      make_gemm("v_proj", d, d, tokens),
      make_gemm("attn_scores", seq, shape.head_dim, seq, head_runs),
      make_gemm("attn_context", shape.head_dim, seq, seq, head_runs),
      make_gemm(shape.output_name, d, d, tokens),
  };
  if (shape.gated_ffn) {
    layers.push_back(make_gemm("gate_proj", shape.ffn_dim, d, tokens));
    layers.push_back(make_gemm("up_proj", shape.ffn_dim, d, tokens));
    layers.push_back(make_gemm("down_proj", d, shape.ffn_dim, tokens));
  } else {
    layers.push_back(make_gemm("ffn_up", shape.ffn_dim, d, tokens));
    layers.push_back(make_gemm("ffn_down", d, shape.ffn_dim, tokens));
  }
  return layers;
}

std::vector<Gemm> bert_base_layers(const OptionValues& options) { return transformer_block(kBertBase, options); }
std::vector<Gemm> llama2_7b_layers(const OptionValues& options) { return transformer_block(kLlama2_7B, options); }

// ---------------------------------------------------------------------------------------------------------------
// Built-in network specs: "name" or "name:key=value,key=value"

struct OptionDefault {
  const char* key;
  std::uint64_t value;
};

struct BuiltinNetwork {
  const char* name;
  std::vector<OptionDefault> options;  // in the order the network's canonical name spells them
  std::vector<Gemm> (*layers)(const OptionValues&);
};

const std::vector<BuiltinNetwork>& builtin_networks() {
  static const std::vector<BuiltinNetwork> networks = {
      {"resnet50", {{"batch", 1}}, resnet50_layers},
      {"bert_base", {{"seq", 512}, {"batch", 1}}, bert_base_layers},
      {"llama2_7b", {{"seq", 2048}, {"batch", 1}}, llama2_7b_layers},
  };
  return networks;
}

const BuiltinNetwork& find_builtin(std::string_view name) {
  for (const BuiltinNetwork& network : builtin_networks())
    if (name == network.name) return network;
  throw WorkloadError("unknown built-in network " + in_quotes(name) + "; valid: " + joined(builtin_network_names(), ", "));
}

std::string valid_keys(const BuiltinNetwork& network) {
  std::vector<std::string> keys;
  for (const OptionDefault& option : network.options) keys.emplace_back(option.key);
  return joined(keys, ", ");
}

OptionValues default_options(const BuiltinNetwork& network) {
  OptionValues values;
  for (const OptionDefault& option : network.options) values.emplace(option.key, option.value);
  return values;
}

// Sets one "key=value" of the spec; every given key must be one of the network's and given once.
void apply_option(const BuiltinNetwork& network, std::string_view assignment, OptionValues& values,
                  OptionValues& given) {
  const std::string prefix = "built-in network " + in_quotes(network.name) + ": ";
  const std::size_t equals = assignment.find('=');
  const std::string_view key = trimmed(assignment.substr(0, equals));
  if (key.empty())
    throw WorkloadError(prefix + "empty option; write " + network.name + ":key=value,key=value (options: " +
                        valid_keys(network) + ")");
  const auto known = values.find(key);
  if (known == values.end())
    throw WorkloadError(prefix + "unknown option " + in_quotes(key) + "; valid: " + valid_keys(network));
  if (equals == std::string_view::npos)
    throw WorkloadError(prefix + "option " + in_quotes(key) + " has no value; write " + std::string(key) + "=<value>");
  if (given.count(key) != 0) throw WorkloadError(prefix + "option " + in_quotes(key) + " given twice");
  const std::string_view text = trimmed(assignment.substr(equals + 1));
  std::uint64_t value = 0;
  const std::string violation = positive_integer_violation(text, value);
  if (!violation.empty())
    throw WorkloadError(prefix + "option " + std::string(key) + " = " + in_quotes(text) + ": " + violation);
  known->second = value;
  given.emplace(key, value);
}

std::string canonical_name(const BuiltinNetwork& network, const OptionValues& values) {
  std::vector<std::string> assignments;
  for (const OptionDefault& option : network.options)
    assignments.push_back(std::string(option.key) + "=" + std::to_string(values.at(option.key)));
  return std::string(network.name) + ":" + joined(assignments, ",");
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Public API

OfmapSize ofmap_size(const ConvLayer& layer) {
  validate_conv(layer);
  return {windows_along(layer.ifmap_h, layer.filter_h, layer.stride),
          windows_along(layer.ifmap_w, layer.filter_w, layer.stride)};
}

Gemm lower_conv(const ConvLayer& layer) {
  const OfmapSize ofmap = ofmap_size(layer);
  const std::string label = conv_label(layer);
  const std::uint64_t filter_area = checked_product(layer.filter_h, layer.filter_w, label + ": window");
  return make_gemm(layer.name, layer.filters, checked_product(filter_area, layer.channels, label + ": window"),
                   checked_product(ofmap.h, ofmap.w, label + ": ofmap pixels"));
}

std::uint64_t macs(const Gemm& gemm) {
  const std::string what = "MACs of " + in_quotes(gemm.name);
  return checked_product(checked_product(checked_product(gemm.m, gemm.k, what), gemm.n, what), gemm.count, what);
}

std::uint64_t total_macs(const Network& network) {
  std::uint64_t total = 0;
  for (const Gemm& gemm : network.layers) total = checked_sum(total, macs(gemm), "MACs of " + in_quotes(network.name));
  return total;
}

Network parse_scalesim_conv_topology(std::string_view text, const std::string& source_name) {
  return parse_topology(text, source_name, conv_row_to_gemm);
}

Network parse_scalesim_gemm_topology(std::string_view text, const std::string& source_name) {
  return parse_topology(text, source_name, gemm_row_to_gemm);
}

Network read_scalesim_topology(const std::string& path, TopologyKind kind) {
  const std::string text = read_input_file(path, kMaxInputBytes, "a SCALE-Sim topology");
  return kind == TopologyKind::Conv ? parse_scalesim_conv_topology(text, path)
                                    : parse_scalesim_gemm_topology(text, path);
}

std::string ignored_text(const std::vector<IgnoredOp>& ignored) {
  std::vector<std::string> items;
  for (const IgnoredOp& op : ignored) items.push_back(std::to_string(op.count) + " " + op.op);
  return items.empty() ? "" : "ignored: " + joined(items, ", ");
}

std::vector<std::string> builtin_network_names() {
  std::vector<std::string> names;
  for (const BuiltinNetwork& network : builtin_networks()) names.emplace_back(network.name);
  return names;
}

Network builtin_network(const std::string& spec) {
  const std::size_t colon = spec.find(':');
  const BuiltinNetwork& network = find_builtin(trimmed(std::string_view(spec).substr(0, colon)));
  OptionValues values = default_options(network);
  if (colon != std::string::npos) {
    OptionValues given;
    for (const std::string_view assignment : split(std::string_view(spec).substr(colon + 1), ','))
      apply_option(network, assignment, values, given);
  }
  const std::string name = canonical_name(network, values);
  try {
    return {name, network.layers(values), {}};
  } catch (const WorkloadError& error) {  // a dimension that overflows: say which spec made it
    throw WorkloadError("built-in network " + in_quotes(name) + ": " + error.what());
  }
}

}  // namespace pevp::sweep
