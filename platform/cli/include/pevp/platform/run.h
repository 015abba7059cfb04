// `pe-vp run`: run a program on the virtual platform the way a driver engineer
// does at bring-up -- load SBUF (or PSUM) from .npy files, arm the sequencer,
// apply a register script (writes, reads, expectations, the submit and the wait),
// run the program to completion or to its first fault, and dump memory regions
// back to .npy. Every failure is one line on the error stream and a non-zero exit
// status. docs/running.md.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pevp/isa/decode.h"
#include "pevp/isa/enums.h"
#include "pevp/platform/config.h"
#include "pevp/platform/recorder.h"
#include "pevp/platform/platform.h"

namespace pevp::platform {

// --load FILE.npy@ADDR:DTYPE -- row r of the (2-D, or 1-D as one row) array goes
// to partition (ADDR's partition + r) at ADDR's offset inside the partition, its
// elements converted to DTYPE (round to nearest even) and stored contiguously.
struct LoadSpec {
  std::string file;
  std::uint64_t address = 0;
  std::string dtype;  // bf16, fp16, fp32, fp8_e4m3, ... (host::parse_input_type) or an ISA name
};

// --dump ADDR:RxC:DTYPE=FILE.npy -- R partitions x C contiguous elements of DTYPE
// from ADDR (the same layout as a load), decoded to fp32 and written as .npy.
struct DumpSpec {
  std::uint64_t address = 0;
  std::size_t rows = 0, cols = 0;
  std::string dtype;
  std::string file;
};

// Parse the command-line forms; throw std::invalid_argument naming the part that is wrong.
LoadSpec parse_load(std::string_view text);
DumpSpec parse_dump(std::string_view text);

// One line of a register script (--regs FILE):
//   write FACE NAME VALUE     a register or field (NAME: reg, bundle.reg, either with .field)
//   read FACE NAME            print "FACE:NAME = VALUE"
//   expect FACE NAME VALUE    fail unless equal
//   poll FACE NAME VALUE      re-read every 100 ns until equal (fail after 1 ms of simulated time)
//   submit                    queue the program (once)
//   wait                      wait until the SEQ is done or stopped on a fault
// FACE is top, cluster, protected or vp; VALUE decimal or 0x hex; '#' starts a comment.
// Without `submit`, the program is queued just before the first `wait`; without
// `wait`, after the last line (and then waited for).
struct ScriptLine {
  // ExpectFault: wait for the program to stop on a fault of rule `name` (the script goes on); ClearError: clear
  // the record, the queue resumes after the faulting instruction; Dump: every register of `face`.
  enum class Op { Write, Read, Expect, Poll, Submit, Wait, ExpectFault, ClearError, Dump } op = Op::Wait;
  std::string face, name;
  std::uint32_t value = 0;
  std::size_t line = 0;  // 1-based, for messages
};
std::vector<ScriptLine> parse_script(const std::string& text, const std::string& file);

struct RunCommand {
  isa::Generation gen = isa::Generation::MARIANA;
  std::string program;  // .bin (64-byte records) or .pes (assembly)
  // The program's text when the command line has already read it (a .pes whose .gen directive chose the
  // generation): a pipe holds its bytes once, so it is not read again.
  std::optional<std::string> program_source;
  // --quiet: no summary lines (the program's counts and timing, "wrote ..."); script reads and dumps still print.
  bool quiet = false;
  std::vector<LoadSpec> loads;
  std::vector<DumpSpec> dumps;
  std::string regs;     // register script file ("" = none)
  // The platform's configuration (default: the generation's preset); its generation must be `gen`.
  std::optional<VpConfig> config;
  // --trace / --vcd / --stats-json ("" = none).
  RecorderOptions outputs;
  // --restore FILE: a checkpoint (docs/checkpoint.md) restored before anything else -- read and checked against
  // the configuration before simulating; the restored CSRs are the arm state, so the run does not arm again.
  std::string restore;
  // --checkpoint FILE: the platform saved when the program is done and the SEQ idle, before the dumps.
  std::string checkpoint;
};

// Exit status: 0 success; 1 the program faulted or an expectation failed; 2 bad
// arguments, files or program text, or a checkpoint that cannot be read, restored or written.
int run_program(const RunCommand& cmd, std::ostream& out, std::ostream& err);

// True when `path` names an assembly source (.pes) rather than 64-byte records.
bool is_assembly_path(std::string_view path);

}  // namespace pevp::platform
