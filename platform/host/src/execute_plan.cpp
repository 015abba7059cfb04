// The plain-C++ plan runner (see execute_plan.h).
#include "pevp/host/execute_plan.h"

#include <cstring>
#include <string>
#include <vector>

#include "pevp/isa/decode.h"
#include "pevp/numerics/convert.h"
#include "pevp/pe_array/executor.h"

namespace pevp::host {
namespace {

std::string where(std::size_t step, std::size_t index, const isa::Decoded& d) {
  const std::string op = d.opcode ? std::string(isa::name(*d.opcode)) : "opcode " + std::to_string(d.opcode_byte);
  return "step " + std::to_string(step) + ", instruction " + std::to_string(index) + " (" + op + "): ";
}

}  // namespace

Matrix execute_plan(const GemmPlan& plan, const EncodedOperand& a, const EncodedOperand& b) {
  check_operands(plan, a, b);
  const isa::Generation g = plan.options.gen;
  const auto& geo = geometry_of(plan.options);
  std::vector<std::uint8_t> sbuf(geo.sbuf_bytes(), 0xFF), psum(geo.psum_bytes(), 0xFF);
  Matrix c(plan.shape.m, plan.shape.n, num::bits_float(0xFFFFFFFFu));
  pe::ArrayExecutor array;
  isa::StreamChecker stream;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    for (const SbufLoad& l : step.loads) {
      const std::size_t row = l.bytes_per_partition();
      if (l.partition0 + l.k_count > geo.partitions || l.offset + row > geo.sbuf_partition_bytes)
        throw ExecuteError("step " + std::to_string(s) + ": an SBUF load (partitions " + std::to_string(l.partition0) +
                           "+" + std::to_string(l.k_count) + ", bytes " + std::to_string(l.offset) + "+" +
                           std::to_string(row) + ") leaves SBUF");
      const auto payload = load_payload(l, a, b);
      for (std::size_t i = 0; i < l.k_count; ++i)
        std::memcpy(&sbuf[sbuf_address(geo, static_cast<std::uint32_t>(l.partition0 + i), l.offset)],
                    &payload[i * row], row);
    }
    for (std::size_t i = 0; i < step.program.size(); ++i) {
      const isa::Decoded d = isa::decode(g, geo, step.program[i]);
      if (!d.valid()) throw ExecuteError(where(s, i, d) + d.violations.front().describe());
      if (const auto v = stream.check(d); !v.empty()) throw ExecuteError(where(s, i, d) + v.front().describe());
      pe::ExecResult r;
      if (d.opcode == isa::Opcode::LDWEIGHTS) {
        r = array.ldweights(d, sbuf.data(), sbuf.size());
      } else if (d.opcode == isa::Opcode::MATMUL) {
        r = array.matmul(d, sbuf.data(), sbuf.size(), psum.data(), psum.size());
      } else {
        r = pe::ExecResult::error("host.opcode", "a GEMM program holds only LDWEIGHTS and MATMUL");
      }
      if (!r.ok) throw ExecuteError(where(s, i, d) + r.describe());
    }
    for (const PsumRead& r : step.reads) {
      if (r.partition0 + r.partitions > geo.partitions || r.bank >= geo.psum_banks ||
          r.elements * 4 > geo.psum_bank_bytes || r.row0 + r.partitions > c.rows || r.col0 + r.elements > c.cols)
        throw ExecuteError("step " + std::to_string(s) + ": a PSUM read (partitions " +
                           std::to_string(r.partition0) + "+" + std::to_string(r.partitions) + ", bank " +
                           std::to_string(r.bank) + ", " + std::to_string(r.elements) +
                           " elements) leaves PSUM or C");
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(r.partitions) * r.elements * 4);
      const std::size_t first = psum_address(geo, r.partition0, r.bank, 0) - isa::ArrayGeometry::kPsumBase;
      for (std::size_t p = 0; p < r.partitions; ++p)
        std::memcpy(&bytes[p * r.elements * 4], &psum[first + p * geo.psum_partition_bytes()], r.elements * 4);
      store_read(r, bytes.data(), c);
    }
  }
  return c;
}

}  // namespace pevp::host
