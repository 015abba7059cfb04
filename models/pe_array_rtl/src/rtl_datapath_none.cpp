// A build without the PE tile unit: no RTL to run.
#include <stdexcept>

#include "pevp/pe_array_rtl/rtl_datapath.h"

namespace pevp::pe_rtl {
class RtlTile {};
}  // namespace pevp::pe_rtl

namespace pevp::pe_array_rtl {

bool available() { return false; }

std::string geometry_refusal(const isa::ArrayGeometry&, Variant) {
  return "this build has no PE tile RTL (Verilator was not found when it was configured; scripts/setup.sh "
         "installs it)";
}

RtlDatapath::RtlDatapath(unsigned, unsigned, Variant variant) : variant_(variant) {
  throw std::invalid_argument(geometry_refusal({}, variant));
}
RtlDatapath::~RtlDatapath() = default;
std::string RtlDatapath::name() const { return "RTL tile"; }
std::string RtlDatapath::refusal(const pe::MicroOp&) const { return "no RTL"; }
std::uint64_t RtlDatapath::ensure_loaded(const pe::Stationary&) { return 0; }
pe::DatapathTiming RtlDatapath::load(const pe::Stationary&) { return {}; }
pe::DatapathTiming RtlDatapath::matmul(const pe::Stationary&, const float*, std::size_t, bool, float*) { return {}; }
std::uint64_t RtlDatapath::cycle() const { return 0; }
void RtlDatapath::trace(const std::string&) {}

}  // namespace pevp::pe_array_rtl
