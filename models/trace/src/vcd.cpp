#include "pevp/trace/vcd.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "text.h"
#include "pevp/files/output_file.h"

namespace pevp::trace {

namespace {

std::string sanitize(std::string_view s) {
  std::string r(s);
  for (char& c : r) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) c = '_';
  }
  return r.empty() ? "_" : r;
}

std::vector<std::string> scope_path(std::string_view scope) {
  std::vector<std::string> path;
  std::size_t pos = 0;
  while (pos <= scope.size()) {
    const std::size_t dot = std::min(scope.find('.', pos), scope.size());
    if (dot > pos) path.push_back(sanitize(scope.substr(pos, dot - pos)));
    pos = dot + 1;
  }
  if (path.empty()) path.push_back("top");
  return path;
}

struct ScopeNode {
  std::string name;
  std::vector<VcdWriter::SignalId> vars;
  std::vector<std::unique_ptr<ScopeNode>> children;  // in order of first appearance
  ScopeNode* child(const std::string& n) {
    for (auto& c : children)
      if (c->name == n) return c.get();
    children.push_back(std::make_unique<ScopeNode>());
    children.back()->name = n;
    return children.back().get();
  }
};

void append_value(std::string& o, unsigned width, std::uint64_t v, const std::string& id) {
  if (width == 1) {
    o.push_back(v ? '1' : '0');
  } else {
    o.push_back('b');
    int top = 63;
    while (top > 0 && !((v >> top) & 1)) --top;
    for (int b = top; b >= 0; --b) o.push_back(((v >> b) & 1) ? '1' : '0');
    o.push_back(' ');
  }
  o += id;
  o.push_back('\n');
}

}  // namespace

std::string VcdWriter::id_code(std::uint32_t n) {
  std::string s;
  std::uint64_t v = n;
  for (;;) {
    s.push_back(static_cast<char>('!' + v % 94));
    v /= 94;
    if (v == 0) break;
    --v;
  }
  return s;
}

VcdWriter::SignalId VcdWriter::signal(std::string_view scope, std::string_view name, unsigned width) {
  if (width == 0 || width > 64)
    throw std::invalid_argument("vcd: signal '" + std::string(scope) + "." + std::string(name) + "': width " +
                                std::to_string(width) + " is not 1..64");
  auto key = std::make_tuple(scope_path(scope), sanitize(name));
  const auto it = signal_ids_.find(key);
  if (it != signal_ids_.end()) {
    const Signal& s = signals_[it->second];
    if (s.width != width)
      throw std::invalid_argument("vcd: signal '" + std::string(scope) + "." + std::string(name) +
                                  "' already declared with width " + std::to_string(s.width) + ", not " +
                                  std::to_string(width));
    return it->second;
  }
  const auto id = static_cast<SignalId>(signals_.size());
  signals_.push_back(Signal{std::get<0>(key), std::get<1>(key), width});
  signal_ids_.emplace(std::move(key), id);
  return id;
}

void VcdWriter::change(SignalId s, std::uint64_t time_ps, std::uint64_t value) {
  if (s >= signals_.size())
    throw std::out_of_range("vcd: signal id " + std::to_string(s) + " was not returned by signal() (" +
                            std::to_string(signals_.size()) + " signals)");
  const unsigned w = signals_[s].width;
  if (w < 64) value &= (std::uint64_t{1} << w) - 1;
  changes_.push_back(Change{time_ps, s, value});
}

void VcdWriter::write(std::ostream& os) const {
  std::vector<std::string> ids(signals_.size());
  for (SignalId i = 0; i < signals_.size(); ++i) ids[i] = id_code(i);

  ScopeNode root;
  for (SignalId i = 0; i < signals_.size(); ++i) {
    ScopeNode* n = &root;
    for (const std::string& c : signals_[i].scope) n = n->child(c);
    n->vars.push_back(i);
  }

  detail::Chunked out(os);
  std::string& o = out.buf();
  o += "$version pe-vp $end\n$timescale 1ps $end\n";
  if (window_) o += "$comment window " + window_->text + " $end\n";
  const auto emit_scope = [&](const auto& self, const ScopeNode& n) -> void {
    o += "$scope module " + n.name + " $end\n";
    for (SignalId i : n.vars) {
      const Signal& s = signals_[i];
      o += "$var wire " + std::to_string(s.width) + " " + ids[i] + " " + s.name;
      if (s.width > 1) o += " [" + std::to_string(s.width - 1) + ":0]";
      o += " $end\n";
    }
    for (const auto& c : n.children) self(self, *c);
    o += "$upscope $end\n";
  };
  for (const auto& c : root.children) emit_scope(emit_scope, *c);
  o += "$enddefinitions $end\n";

  // Changes by (time, signal, recording order); the last of each (time, signal) counts.
  struct Ordered {
    Change c;
    std::size_t seq;
  };
  std::vector<Ordered> sorted(changes_.size());
  for (std::size_t i = 0; i < changes_.size(); ++i) sorted[i] = Ordered{changes_[i], i};
  std::sort(sorted.begin(), sorted.end(), [](const Ordered& a, const Ordered& b) {
    if (a.c.time != b.c.time) return a.c.time < b.c.time;
    if (a.c.signal != b.c.signal) return a.c.signal < b.c.signal;
    return a.seq < b.seq;
  });

  std::vector<std::uint64_t> value(signals_.size(), 0);
  std::size_t k = 0;
  // The first time written (0, or the window's start): the changes up to it make the initial values.
  const std::uint64_t first = window_ ? window_->begin : 0;
  for (; k < sorted.size() && sorted[k].c.time <= first; ++k) value[sorted[k].c.signal] = sorted[k].c.value;
  o.push_back('#');
  detail::append_uint(o, first);
  o += "\n$dumpvars\n";
  for (SignalId i = 0; i < signals_.size(); ++i) append_value(o, signals_[i].width, value[i], ids[i]);
  o += "$end\n";
  out.maybe_flush();

  while (k < sorted.size()) {
    const std::uint64_t t = sorted[k].c.time;
    if (window_ && window_->end && t >= *window_->end) break;
    bool stamped = false;
    while (k < sorted.size() && sorted[k].c.time == t) {
      const SignalId s = sorted[k].c.signal;
      while (k + 1 < sorted.size() && sorted[k + 1].c.time == t && sorted[k + 1].c.signal == s) ++k;
      const std::uint64_t v = sorted[k].c.value;
      ++k;
      if (v == value[s]) continue;
      value[s] = v;
      if (!stamped) {
        o.push_back('#');
        detail::append_uint(o, t);
        o.push_back('\n');
        stamped = true;
      }
      append_value(o, signals_[s].width, v, ids[s]);
    }
    out.maybe_flush();
  }
  out.flush();
}

void VcdWriter::set_window(std::uint64_t begin_ps, std::optional<std::uint64_t> end_ps, std::string text) {
  window_ = Window{begin_ps, end_ps, std::move(text)};
}

bool VcdWriter::write_file(const std::string& path, std::string* error) const {
  return files::write_file(path, [this](std::ostream& os) { write(os); }, error);
}

}  // namespace pevp::trace
