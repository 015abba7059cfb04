#include "pevp/platform/run.h"
#include "pevp/files/input_file.h"
#include "pevp/files/output_file.h"

#include "pevp/isa/hex.h"
#include "pevp/isa/rules.h"

#include <cctype>
#include <limits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "pevp/host/npy.h"
#include "pevp/host/operands.h"
#include "pevp/isa_text/assembly.h"
#include "pevp/pe_array/compute.h"
#include "pevp/platform/checkpoint.h"
#include "pevp/capi/stale_stack_poison.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/interrupt.h"
#include "pevp/platform/regs.h"
#include "pevp/platform/virtual_platform.h"

#include "interrupted.h"

namespace pevp::platform {

namespace {

std::uint64_t parse_number(std::string_view text, std::string_view what) {
  // Decimal, or hex with 0x: never octal (a leading 0 is still decimal).
  const std::string t(text);
  const bool is_hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  std::size_t used = 0;
  std::uint64_t v = 0;
  if (!t.empty() && std::isxdigit(static_cast<unsigned char>(is_hex ? t[2] : t[0]))) {
    try {
      v = std::stoull(is_hex ? t.substr(2) : t, &used, is_hex ? 16 : 10);
      if (is_hex) used += 2;
    } catch (const std::exception&) {
      used = 0;
    }
  }
  if (t.empty() || used != t.size())
    throw std::invalid_argument(std::string(what) + " '" + t + "' is not a number (decimal or 0x hex)");
  return v;
}

// Which memory an address is in, and its partition geometry.
struct Place {
  const char* memory;
  std::uint32_t partition, offset, partition_bytes, partitions;
};

Place place_of(const AddressMap& map, const isa::ArrayGeometry& geo, std::uint64_t address, const std::string& what) {
  const std::uint64_t sbuf_size = std::uint64_t{geo.partitions} * geo.sbuf_partition_bytes;
  const std::uint64_t psum_size = std::uint64_t{geo.partitions} * geo.psum_partition_bytes();
  if (address >= map.sbuf && address - map.sbuf < sbuf_size) {
    const std::uint64_t rel = address - map.sbuf;
    return {"SBUF", static_cast<std::uint32_t>(rel / geo.sbuf_partition_bytes),
            static_cast<std::uint32_t>(rel % geo.sbuf_partition_bytes), geo.sbuf_partition_bytes, geo.partitions};
  }
  if (address >= map.psum && address - map.psum < psum_size) {
    const std::uint64_t rel = address - map.psum;
    return {"PSUM", static_cast<std::uint32_t>(rel / geo.psum_partition_bytes()),
            static_cast<std::uint32_t>(rel % geo.psum_partition_bytes()), geo.psum_partition_bytes(), geo.partitions};
  }
  throw std::invalid_argument(what + ": address " + hex(address) + " is in neither SBUF nor PSUM");
}

// Rows x cols elements of `eb` bytes from `p` must stay inside partitions and memory.
void check_region(const Place& p, std::size_t rows, std::size_t cols, std::size_t eb, const std::string& what) {
  if (rows == 0 || cols == 0)
    throw std::invalid_argument(what + ": " + std::to_string(rows) + "x" + std::to_string(cols) +
                                " elements: nothing to transfer");
  if (rows > p.partitions || p.partition + rows > p.partitions)
    throw std::invalid_argument(what + ": " + std::to_string(rows) + " rows from partition " +
                                std::to_string(p.partition) + " leave the " + std::to_string(p.partitions) + " " +
                                p.memory + " partitions");
  // cols is user input: compare before multiplying so a huge value cannot wrap.
  if (cols > p.partition_bytes / eb || std::uint64_t{p.offset} + cols * eb > p.partition_bytes)
    throw std::invalid_argument(what + ": a row of " + std::to_string(cols) + " elements (" +
                                (cols > std::numeric_limits<std::uint64_t>::max() / eb
                                     ? std::string("more than 2^64")
                                     : std::to_string(cols * eb)) +
                                " bytes) at partition offset " + hex(p.offset) +
                                " leaves the " + std::to_string(p.partition_bytes) + "-byte " + p.memory +
                                " partition");
}

std::string read_text(const std::string& path) {
  std::string error;
  std::optional<std::string> text = files::read_file(path, &error);
  if (!text) throw std::invalid_argument(error);
  return std::move(*text);
}

std::vector<isa::RawInstruction> read_program(const std::string& path, const std::optional<std::string>& source,
                                              isa::Generation gen, const isa::ArrayGeometry& geo) {
  const std::string bytes = source ? *source : read_text(path);
  if (is_assembly_path(path)) {
    // Assembly: the first error is the one line reported (all of them with `pe-vp asm`).
    const isa::AsmResult r = isa::assemble(gen, std::string_view(bytes.data(), bytes.size()), isa::AsmOptions(false, geo));
    for (const isa::AsmDiagnostic& d : r.diagnostics)
      if (d.severity == isa::AsmDiagnostic::Severity::Error) throw std::invalid_argument(d.describe(path));
    if (r.records.empty()) throw std::invalid_argument(path + ": the program has no instructions");
    return r.records;
  }
  if (bytes.empty()) throw std::invalid_argument(path + ": the program has no instructions");
  if (bytes.size() % isa::kInstructionBytes != 0)
    throw std::invalid_argument(path + ": " + std::to_string(bytes.size()) +
                                " bytes is not a whole number of 64-byte instructions");
  std::vector<isa::RawInstruction> program(bytes.size() / isa::kInstructionBytes);
  for (std::size_t i = 0; i < program.size(); ++i)
    std::memcpy(program[i].data(), bytes.data() + i * isa::kInstructionBytes, isa::kInstructionBytes);
  return program;
}


// A failure inside the driver program that ends the run with a status.
struct RunFailure : std::runtime_error {
  int status;
  RunFailure(int st, const std::string& what) : std::runtime_error(what), status(st) {}
};

}  // namespace

bool is_assembly_path(std::string_view path) {
  return path.size() >= 4 && path.substr(path.size() - 4) == ".pes";
}

LoadSpec parse_load(std::string_view text) {
  const auto at = text.rfind('@');
  const auto colon = text.rfind(':');
  if (at == std::string_view::npos || colon == std::string_view::npos || colon < at || at == 0)
    throw std::invalid_argument("--load '" + std::string(text) + "': expected FILE.npy@ADDR:DTYPE");
  LoadSpec s;
  s.file = std::string(text.substr(0, at));
  s.address = parse_number(text.substr(at + 1, colon - at - 1), "--load address");
  s.dtype = std::string(text.substr(colon + 1));
  if (s.dtype.empty()) throw std::invalid_argument("--load '" + std::string(text) + "': missing DTYPE");
  return s;
}

DumpSpec parse_dump(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq + 1 == text.size())
    throw std::invalid_argument("--dump '" + std::string(text) + "': expected ADDR:RxC:DTYPE=FILE.npy");
  DumpSpec s;
  s.file = std::string(text.substr(eq + 1));
  const std::string_view spec = text.substr(0, eq);
  const auto c1 = spec.find(':'), c2 = spec.rfind(':');
  if (c1 == std::string_view::npos || c2 == c1)
    throw std::invalid_argument("--dump '" + std::string(text) + "': expected ADDR:RxC:DTYPE=FILE.npy");
  s.address = parse_number(spec.substr(0, c1), "--dump address");
  const std::string_view shape = spec.substr(c1 + 1, c2 - c1 - 1);
  const auto x = shape.find('x');
  if (x == std::string_view::npos)
    throw std::invalid_argument("--dump '" + std::string(text) + "': shape '" + std::string(shape) +
                                "' must be ROWSxCOLS");
  s.rows = parse_number(shape.substr(0, x), "--dump rows");
  s.cols = parse_number(shape.substr(x + 1), "--dump columns");
  if (s.rows == 0 || s.cols == 0) throw std::invalid_argument("--dump '" + std::string(text) + "': empty shape");
  s.dtype = std::string(spec.substr(c2 + 1));
  return s;
}

std::vector<ScriptLine> parse_script(const std::string& text, const std::string& file) {
  std::vector<ScriptLine> out;
  std::istringstream in(text);
  std::string line;
  std::size_t n = 0;
  bool submitted = false;
  while (std::getline(in, line)) {
    ++n;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
    if (w.empty()) continue;
    const std::string where = file + ":" + std::to_string(n) + ": ";
    ScriptLine s;
    s.line = n;
    auto want = [&](std::size_t count, const char* form) {
      if (w.size() != count) throw std::invalid_argument(where + "expected '" + form + "'");
    };
    if (w[0] == "write" || w[0] == "expect" || w[0] == "poll") {
      want(4, (w[0] + " FACE NAME VALUE").c_str());
      s.op = w[0] == "write" ? ScriptLine::Op::Write : w[0] == "expect" ? ScriptLine::Op::Expect : ScriptLine::Op::Poll;
      const std::uint64_t v = parse_number(w[3], where + "value");
      if (v > 0xFFFFFFFFull) throw std::invalid_argument(where + "value " + w[3] + " does not fit 32 bits");
      s.value = static_cast<std::uint32_t>(v);
    } else if (w[0] == "read") {
      want(3, "read FACE NAME");
      s.op = ScriptLine::Op::Read;
    } else if (w[0] == "submit") {
      want(1, "submit");
      if (submitted) throw std::invalid_argument(where + "the program is submitted once");
      submitted = true;
      s.op = ScriptLine::Op::Submit;
    } else if (w[0] == "wait") {
      want(1, "wait");
      s.op = ScriptLine::Op::Wait;
    } else if (w[0] == "expect_fault") {
      want(2, "expect_fault RULE");
      // A rule the table lacks can never be the fault: say so before simulating.
      if (isa::rule_number(w[1]) == isa::kUnknownRule)
        throw std::invalid_argument(where + "expect_fault: no rule '" + w[1] +
                                    "' (the rules and their numbers: docs/errors.md)");
      s.op = ScriptLine::Op::ExpectFault;
      s.name = w[1];
    } else if (w[0] == "clear_error") {
      want(1, "clear_error");
      s.op = ScriptLine::Op::ClearError;
    } else if (w[0] == "dump") {
      want(2, "dump FACE");
      s.op = ScriptLine::Op::Dump;
      s.face = w[1];
    } else {
      throw std::invalid_argument(where + "unknown command '" + w[0] +
                                  "' (write, read, expect, poll, submit, wait, expect_fault, clear_error, dump)");
    }
    if (w.size() >= 3) {
      s.face = w[1];
      s.name = w[2];
    }
    if (!s.face.empty() && s.face != "top" && s.face != "cluster" && s.face != "protected" && s.face != "vp")
      throw std::invalid_argument(where + "unknown register face '" + s.face + "' (top, cluster, protected, vp)");
    out.push_back(std::move(s));
  }
  return out;
}

int run_program(const RunCommand& cmd, std::ostream& out, std::ostream& err) {
  // Everything that can be checked before simulating is checked here, so a typo
  // costs no simulation and gets a precise message.
  const VpConfig vpc = cmd.config ? *cmd.config : preset(cmd.gen);
  const PlatformConfig& cfg = vpc.platform;
  if (vpc.gen() != cmd.gen) {
    err << "pe-vp run: the configuration is for " << isa::name(vpc.gen()) << ", the command for "
        << isa::name(cmd.gen) << '\n';
    return 2;
  }
  std::vector<isa::RawInstruction> program;
  std::vector<ScriptLine> script;
  std::vector<std::pair<Place, host::EncodedOperand>> loads;
  std::vector<std::pair<Place, isa::Dtype>> dumps;
  std::optional<CheckpointImage> restored;
  try {
    if (!cmd.restore.empty() || !cmd.checkpoint.empty()) {
      if (const std::string why = checkpoint_unsupported(vpc); !why.empty())
        throw std::invalid_argument(std::string(cmd.restore.empty() ? "--checkpoint" : "--restore") + ": " + why);
    }
    if (!cmd.restore.empty()) {
      // Read and checked here, so a bad checkpoint costs no simulation and no partial run.
      std::string error;
      const std::optional<std::string> bytes = files::read_file(cmd.restore, &error, checkpoint_input(vpc));
      if (!bytes) throw CheckpointError("checkpoint " + error);
      restored = read_checkpoint(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size(), vpc, cmd.restore);
    }
    // The writer's own checks (a directory, a missing folder, a read-only file, a symlink loop) before simulating,
    // so an output the write after the run would refuse costs no run.
    if (!cmd.checkpoint.empty())
      if (const std::string bad = files::check_output(cmd.checkpoint); !bad.empty())
        throw std::invalid_argument("--checkpoint " + bad);
    for (const DumpSpec& d : cmd.dumps)
      if (const std::string bad = files::check_output(d.file); !bad.empty()) throw std::invalid_argument("--dump " + bad);
    program = read_program(cmd.program, cmd.program_source, cmd.gen, vpc.geometry);
    if (!cmd.regs.empty()) {
      script = parse_script(read_text(cmd.regs), cmd.regs);
      for (const ScriptLine& s : script) {
        if (s.face.empty() || s.op == ScriptLine::Op::Dump) continue;  // dump names a face, no register
        RegisterRef r;
        try {
          r = resolve_register(cfg.map, s.face, s.name);
        } catch (const std::invalid_argument& e) {  // names the register; the line is ours to add
          throw std::invalid_argument(cmd.regs + ":" + std::to_string(s.line) + ": " + e.what());
        }
        const std::uint64_t max = r.field && r.field->width < 32 ? (std::uint64_t{1} << r.field->width) - 1 : 0xFFFFFFFFull;
        if (s.op != ScriptLine::Op::Read && s.value > max)
          throw std::invalid_argument(cmd.regs + ":" + std::to_string(s.line) + ": value " + std::to_string(s.value) +
                                      " does not fit " + r.name() + " (" + std::to_string(r.field->width) +
                                      " bits, at most " + std::to_string(max) + ")");
      }
    }
    for (const LoadSpec& l : cmd.loads) {
      const std::string what = "--load " + l.file;
      const host::NpyArray arr = host::read_npy(l.file);
      host::Matrix m;
      if (arr.shape.size() == 1) {  // one row
        m = host::Matrix(1, arr.shape[0]);
        for (std::size_t i = 0; i < arr.size(); ++i) m.data[i] = static_cast<float>(arr.value(i));
      } else {
        m = host::to_matrix(arr, l.file);
      }
      const isa::Dtype dt = host::parse_input_type(cmd.gen, l.dtype).dtype;
      host::EncodedOperand e = host::encode_operand(m, cmd.gen, dt);
      const Place p = place_of(cfg.map, vpc.geometry, l.address, what);
      check_region(p, e.rows, e.cols, e.element_bytes, what);
      loads.emplace_back(p, std::move(e));
    }
    // A timing-only run moves no data: a dump would be zeros that look like a result.
    if (!cmd.dumps.empty() && vpc.mode == SimMode::Timing)
      throw std::invalid_argument("--dump " + cmd.dumps.front().file +
                                  ": mode timing moves no data, so there is nothing to dump (use --mode both)");
    for (const DumpSpec& d : cmd.dumps) {
      const std::string what = "--dump " + d.file;
      const isa::Dtype dt = host::parse_input_type(cmd.gen, d.dtype).dtype;
      const Place p = place_of(cfg.map, vpc.geometry, d.address, what);
      check_region(p, d.rows, d.cols, pe::operand_bytes(dt), what);
      dumps.emplace_back(p, dt);
    }
    if (const std::string bad = Recorder::check_paths(cmd.outputs); !bad.empty()) throw std::invalid_argument(bad);
    if (const std::string bad = Recorder::check_config(cmd.outputs, vpc); !bad.empty())
      throw std::invalid_argument(bad);
    std::vector<files::NamedOutput> outputs = {{"--trace", cmd.outputs.trace_path},
                                               {"--vcd", cmd.outputs.vcd_path},
                                               {"--stats-json", cmd.outputs.stats_json_path},
                                               {"--micro-op-log", cmd.outputs.micro_op_log_path},
                                               {"--coverage", cmd.outputs.coverage_path}};
    for (const DumpSpec& d : cmd.dumps) outputs.push_back({"--dump (" + hex(d.address) + ")", d.file});
    // --restore may name the --checkpoint file: it is read before simulating, and the save replaces it atomically.
    outputs.push_back({"--checkpoint", cmd.checkpoint});
    if (const std::string twice = files::same_file_twice(outputs); !twice.empty()) throw std::invalid_argument(twice);
  } catch (const std::bad_alloc&) {
    throw;  // sc_main reports it: "pe-vp: out of host memory", status 2
  } catch (const std::exception& e) {
    err << "pe-vp run: " << e.what() << '\n';
    return 2;
  }

  // SIGINT / SIGTERM stop the simulation at its next safe point; the outputs are then written as they stand.
  const InterruptWatch watch;
  VirtualPlatform vp(vpc);
  Recorder recorder(vp.platform(), cmd.outputs);
  // The trace of a faulting program is the one most worth having: written either way.
  const auto write_outputs = [&]() -> bool {
    std::string error;
    if (recorder.finish(&error)) return true;
    err << "pe-vp run: " << error << '\n';
    return false;
  };
  std::vector<host::Matrix> dumped(cmd.dumps.size());
  Completion last;
  sc_core::sc_time completed_at;  // when the driver saw the program done (the dumps read back after it)
  try {
    vp.run([&](Driver& d) {
      auto address = [&](const Place& p, std::uint32_t row) {
        const std::uint64_t base = std::string(p.memory) == "SBUF" ? d.map().sbuf : d.map().psum;
        return base + std::uint64_t{p.partition + row} * p.partition_bytes + p.offset;
      };
      if (restored) apply_checkpoint(vp.platform(), *restored);
      for (const auto& [p, e] : loads)
        for (std::size_t r = 0; r < e.rows; ++r)
          d.write(address(p, static_cast<std::uint32_t>(r)), e.bytes.data() + r * e.cols * e.element_bytes,
                  e.cols * e.element_bytes);
      if (!restored) d.arm();  // a restored platform is armed as it was saved
      bool submitted = false, waited = false;
      auto submit = [&] {
        if (!submitted) d.submit(program);
        submitted = true;
      };
      auto wait = [&] {
        submit();
        last = d.wait_idle();
        completed_at = sc_core::sc_time_stamp();
        waited = true;
        if (last.error) {
          const auto& rec = vp.platform().seq.error();
          const std::size_t held = d.held();
          const std::string unqueued =
              held ? "; " + std::to_string(held) + " later instruction(s) were never queued" : "";
          throw RunFailure(1, "the program faulted: " + (rec ? rec->message : std::string("(no record)")) + unqueued);
        }
        if (last.timed_out)
          throw RunFailure(1, "the SEQ did not settle within 1 s of simulated time (a semaphore nobody sets?)");
      };
      for (const ScriptLine& s : script) {
        const std::string where = cmd.regs + ":" + std::to_string(s.line) + ": ";
        switch (s.op) {
          case ScriptLine::Op::Submit: submit(); break;
          case ScriptLine::Op::Wait: wait(); break;
          case ScriptLine::Op::ExpectFault: {
            submit();
            last = d.wait_idle();
            completed_at = sc_core::sc_time_stamp();
            waited = true;
            if (last.timed_out) throw RunFailure(1, where + "expect_fault " + s.name + ": the SEQ did not settle");
            if (!last.error) throw RunFailure(1, where + "expect_fault " + s.name + ": the program completed");
            const auto rec = d.error_record();
            if (!rec || rec->rule != s.name)
              throw RunFailure(1, where + "expect_fault " + s.name + ": the fault is " +
                                      (rec ? rec->describe() : std::string("(no record)")));
            out << "fault as expected: " << rec->describe() << '\n';
            break;
          }
          case ScriptLine::Op::ClearError:
            d.clear_error();
            waited = false;  // the queue resumes: the run ends when it is done again
            break;
          case ScriptLine::Op::Dump: {
            const regfile::RegFileDesc& desc = **regfile_by_name(s.face);
            for (std::size_t i = 0; i < desc.num_registers; ++i) {
              const regfile::RegisterDesc& reg = desc.registers[i];
              const RegisterRef r =
                  resolve_register(d.map(), s.face, std::string(reg.bundle) + "." + std::string(reg.name));
              const std::uint32_t v = d.read(r);
              out << r.name() << " = " << v << " (" << hex(v) << ")\n";
            }
            break;
          }
          case ScriptLine::Op::Write: d.write(resolve_register(d.map(), s.face, s.name), s.value); break;
          case ScriptLine::Op::Read: {
            const RegisterRef r = resolve_register(d.map(), s.face, s.name);
            const std::uint32_t v = d.read(r);
            out << r.name() << " = " << v << " (" << hex(v) << ")\n";
            break;
          }
          case ScriptLine::Op::Expect: {
            const RegisterRef r = resolve_register(d.map(), s.face, s.name);
            const std::uint32_t v = d.read(r);
            if (v != s.value)
              throw RunFailure(1, where + "expect " + r.name() + " = " + std::to_string(s.value) + ", read " +
                                      std::to_string(v));
            break;
          }
          case ScriptLine::Op::Poll: {
            const RegisterRef r = resolve_register(d.map(), s.face, s.name);
            const sc_core::sc_time deadline = sc_core::sc_time_stamp() + sc_core::sc_time(1, sc_core::SC_MS);
            std::uint32_t v = d.read(r);
            while (v != s.value && sc_core::sc_time_stamp() < deadline) {
              sc_core::wait(d.poll_interval);
              v = d.read(r);
            }
            if (v != s.value)
              throw RunFailure(1, where + "poll " + r.name() + " = " + std::to_string(s.value) +
                                      ": still " + std::to_string(v) + " after 1 ms");
            break;
          }
        }
      }
      if (!waited) wait();
      if (!cmd.checkpoint.empty()) {
        // The SEQ parks in the delta after it settles: give it those deltas, never simulated time.
        for (int delta = 0; delta < 4 && !idle_point_violation(vp.platform()).empty(); ++delta)
          sc_core::wait(sc_core::SC_ZERO_TIME);
        save_checkpoint_file(vp.platform(), cmd.checkpoint);
      }
      for (std::size_t i = 0; i < dumps.size(); ++i) {
        const auto& [p, dt] = dumps[i];
        const DumpSpec& spec = cmd.dumps[i];
        const std::size_t eb = pe::operand_bytes(dt);
        std::vector<std::uint8_t> row(spec.cols * eb);
        host::Matrix m(spec.rows, spec.cols);
        for (std::size_t r = 0; r < spec.rows; ++r) {
          d.read(address(p, static_cast<std::uint32_t>(r)), row.data(), row.size());
          for (std::size_t c = 0; c < spec.cols; ++c) {
            std::uint32_t code = 0;
            std::memcpy(&code, &row[c * eb], eb);
            m.at(r, c) = host::decode_element(cmd.gen, dt, code);
          }
        }
        dumped[i] = std::move(m);
      }
    });
  } catch (const Interrupted& i) {
    capi::clear_stale_stack_poison();  // the run's exception came out of a SystemC thread (stale_stack_poison.h)
    InterruptedProgress p;
    p.signal = i.signal;
    p.at = i.at;
    nlohmann::json stats = run_stats(vp.platform());
    p.instructions_retired = stats["instructions"]["retired"].get<std::uint64_t>();
    p.instructions_total = program.size();
    mark_interrupted(stats, p);
    if (trace::TraceEventWriter* trace = recorder.trace()) trace->note("interrupted", describe(p));
    std::string error;
    recorder.finish(&error, &stats);
    err << interrupted_line("pe-vp run", p,
                            {{"trace", cmd.outputs.trace_path},
                             {"vcd", cmd.outputs.vcd_path},
                             {"stats", cmd.outputs.stats_json_path},
                             {"micro-op log", cmd.outputs.micro_op_log_path},
                             {"coverage", cmd.outputs.coverage_path}},
                            error)
        << '\n';
    return interrupted_status(i.signal);
  } catch (const RunFailure& f) {
    capi::clear_stale_stack_poison();  // the run's exception came out of a SystemC thread (stale_stack_poison.h)
    err << "pe-vp run: " << f.what() << '\n';
    write_outputs();
    return f.status;
  } catch (const CheckpointError& e) {
    capi::clear_stale_stack_poison();  // the run's exception came out of a SystemC thread (stale_stack_poison.h)
    err << "pe-vp run: " << e.what() << '\n';
    write_outputs();
    return 2;
  } catch (const std::bad_alloc&) {
    throw;  // the host ran out of memory, the program did not fail: sc_main reports it (status 2)
  } catch (const std::exception& e) {
    capi::clear_stale_stack_poison();
    err << "pe-vp run: " << e.what() << '\n';
    write_outputs();
    return 1;
  }
  // checks.hazards = error: the driver program met a hazard (the run itself went on; warnings went to stderr).
  if (const std::optional<HazardReport> h = vp.platform().hazards.take_error()) {
    err << "pe-vp run: " << h->text << '\n';
    write_outputs();
    return 1;
  }
  // --quiet: the summary goes nowhere (a stream without a buffer drops what it is given).
  std::ostream discard(nullptr);
  std::ostream& summary = cmd.quiet ? discard : out;
  summary << "pe-vp run: " << cmd.program << ": " << program.size() << " instructions, " << last.retired
          << " retired, done at " << completed_at.to_string() << " simulated (the simulation ended at "
          << sc_core::sc_time_stamp().to_string() << ", after the read-back)\n";
  if (vpc.mode != SimMode::Functional) summary << format_timing_summary(run_stats(vp.platform()));
  if (!write_outputs()) return 2;
  if (!cmd.restore.empty()) summary << "  restored " << cmd.restore << " (at " << restored->time().to_string() << ")\n";
  for (const auto& [what, path] : {std::pair<const char*, const std::string&>{"trace", cmd.outputs.trace_path},
                                   {"vcd", cmd.outputs.vcd_path},
                                   {"stats", cmd.outputs.stats_json_path},
                                   {"micro-op log", cmd.outputs.micro_op_log_path},
                                   {"coverage", cmd.outputs.coverage_path},
                                   {"checkpoint", cmd.checkpoint}})
    if (!path.empty()) summary << "  wrote " << path << " (" << what << ")\n";
  for (std::size_t i = 0; i < dumped.size(); ++i) {
    std::string error;
    if (!host::write_npy(cmd.dumps[i].file, dumped[i], &error)) {
      err << "pe-vp run: " << error << '\n';
      return 2;
    }
    summary << "  wrote " << cmd.dumps[i].file << " (" << cmd.dumps[i].rows << "x" << cmd.dumps[i].cols << " "
            << cmd.dumps[i].dtype << " from " << hex(cmd.dumps[i].address) << ", as fp32)\n";
  }
  if (const int signal = interrupt_signal()) {  // noted after the simulation's end, while the files were written
    err << "pe-vp run: interrupted by " << signal_name(signal) << " after the simulation had ended: its files are "
        << "complete\n";
    return interrupted_status(signal);
  }
  return 0;
}

}  // namespace pevp::platform
