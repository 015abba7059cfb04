// A VCD (IEEE 1364 value change dump) writer for waveform viewers (GTKWave,
// Surfer): named signals in nested scopes, value changes recorded in any order,
// written sorted with only the real changes. docs/trace-format.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace pevp::trace {

class VcdWriter {
 public:
  using SignalId = std::uint32_t;

  // width 1 = scalar wire, 2..64 a vector. scope may be dotted ("pe_vp.arr_seq")
  // -> nested $scope module; an empty scope puts the signal in module "top".
  // Characters a VCD reference cannot hold (white space, control characters)
  // become '_'. The same (scope, name) returns the same id; asking for it with
  // another width, or a width of 0 or above 64, throws std::invalid_argument.
  SignalId signal(std::string_view scope, std::string_view name, unsigned width);

  // Any order; several changes of one signal at one time: the last recorded
  // wins. Bits above the signal's width are dropped. Throws std::out_of_range
  // for a SignalId this writer did not hand out.
  void change(SignalId s, std::uint64_t time_ps, std::uint64_t value);

  // Writes only the time window [begin_ps, end_ps) (end absent: to the end; --trace-window, trace_window.h): the
  // "$dumpvars" block at #begin_ps holds every signal's value then, followed by the changes inside the window; a
  // "$comment window TEXT $end" line after $timescale says which window the file holds.
  void set_window(std::uint64_t begin_ps, std::optional<std::uint64_t> end_ps, std::string text);

  std::size_t signals() const { return signals_.size(); }
  std::size_t changes() const { return changes_.size(); }

  // $version, $timescale 1ps, the $scope/$var/$upscope tree, $enddefinitions,
  // "#0 $dumpvars" with every signal's value at time 0 (0 unless a change at
  // time 0 says otherwise), then one "#t" block per later time that has a real
  // value change ("b<binary> <id>" for vectors, "0<id>"/"1<id>" for scalars).
  // Deterministic: no $date.
  void write(std::ostream& os) const;
  // Through a temporary file renamed into place; false and *error =
  // "<path>: <reason>" on failure (error may be null).
  bool write_file(const std::string& path, std::string* error) const;

  // The identifier code of the n-th signal: printable ASCII '!'..'~', one
  // character for the first 94 signals, then two, and so on (bijective base 94).
  static std::string id_code(std::uint32_t n);

 private:
  struct Signal {
    std::vector<std::string> scope;  // path components
    std::string name;
    unsigned width;
  };
  struct Change {
    std::uint64_t time;
    SignalId signal;
    std::uint64_t value;
  };
  std::vector<Signal> signals_;
  std::map<std::tuple<std::vector<std::string>, std::string>, SignalId> signal_ids_;
  std::vector<Change> changes_;
  struct Window {
    std::uint64_t begin;
    std::optional<std::uint64_t> end;
    std::string text;
  };
  std::optional<Window> window_;
};

}  // namespace pevp::trace
