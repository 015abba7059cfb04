#include "pevp/platform/firmware_log.h"

#include <cstdio>

namespace pevp::platform {

FirmwareLog::FirmwareLog(Platform& platform, std::ostream& out)
    : p_(platform), out_(out), previous_observer_(platform.arr_seq.observer) {
  p_.seq.firmware_observer = [this](std::uint64_t index, const std::string& line, arrseq::Cycle at) {
    out_ << "fw [" << us(at, 12) << " us] instr " << index << ": " << line << '\n';
  };
  p_.arr_seq.observer = [this](const pe::MicroOp& op, const arrseq::Slot& s) {
    if (previous_observer_) previous_observer_(op, s);
    const isa::TileRect& t = op.tile;
    out_ << "fw [" << us(s.push, 12) << " us]   " << pe::name(op.kind) << " tile rows " << t.row0 << '-'
         << t.row0 + t.rows - 1 << " cols " << t.col0 << '-' << t.col0 + t.cols - 1 << ": start " << us(s.start)
         << " us, complete " << us(s.complete) << ", response " << us(s.response) << '\n';
  };
}

FirmwareLog::~FirmwareLog() {
  p_.seq.firmware_observer = nullptr;
  p_.arr_seq.observer = previous_observer_;
  out_.flush();
}

std::string FirmwareLog::us(arrseq::Cycle c, int width) const {
  char text[48];
  std::snprintf(text, sizeof text, "%*.4f", width, static_cast<double>(p_.arr_seq.to_ps(c)) / 1e6);
  return text;
}

}  // namespace pevp::platform
