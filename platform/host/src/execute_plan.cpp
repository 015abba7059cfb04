// The plain-C++ plan runner (see execute_plan.h).
#include "pevp/host/execute_plan.h"

#include <cstring>
#include <string>
#include <vector>

#include "pevp/firmware/firmware.h"
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
  // The instructions go through the firmware stub like the SEQ's (validity, the stream rule, the lowering to
  // micro-ops) and its micro-ops through the array's executor: the same units as the platform, without SystemC.
  pe::ArrayExecutor array(geo);
  fw::Firmware firmware;
  fw::HandlerOutput out;
  std::uint64_t index = 0;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    for (const SbufLoad& l : step.loads) {
      const std::size_t row = l.bytes_per_partition();
      if (l.partition0 + l.partitions() > geo.partitions || l.offset + row > geo.sbuf_partition_bytes)
        throw ExecuteError("step " + std::to_string(s) + ": an SBUF load (partitions " + std::to_string(l.partition0) +
                           "+" + std::to_string(l.partitions()) + ", bytes " + std::to_string(l.offset) + "+" +
                           std::to_string(row) + ") leaves SBUF");
      const auto payload = load_payload(l, a, b);
      for (std::size_t i = 0; i < l.partitions(); ++i)
        std::memcpy(&sbuf[sbuf_address(geo, static_cast<std::uint32_t>(l.partition0 + i), l.offset)],
                    &payload[i * row], row);
    }
    for (std::size_t i = 0; i < step.program.size(); ++i) {
      const auto d = std::make_shared<const isa::Decoded>(isa::decode(g, geo, step.program[i]));
      firmware.handle(fw::prepare(d), index, out);
      firmware.retire(index++);  // in order and at once: nothing to rewind
      if (out.fault) throw ExecuteError(where(s, i, *d) + out.fault->describe());
      for (const pe::MicroOp& op : out.ops) {
        pe::ExecResult r;
        if (op.kind == pe::MicroOpKind::WeightLoad) {
          r = array.ldweights(op, sbuf.data(), sbuf.size());
        } else if (op.kind == pe::MicroOpKind::Matmul) {
          r = array.matmul(op, sbuf.data(), sbuf.size(), psum.data(), psum.size());
        } else {
          r = pe::ExecResult::error("host.opcode", "a GEMM program holds only LDWEIGHTS and MATMUL");
        }
        if (!r.ok) throw ExecuteError(where(s, i, *d) + r.describe());
      }
    }
    for (const PsumRead& r : step.reads) {
      if (r.partition0 + r.partitions > geo.partitions || r.bank >= geo.psum_banks ||
          std::uint64_t{r.bank} * geo.psum_bank_bytes + r.offset + std::uint64_t{r.elements} * 4 >
              geo.psum_partition_bytes() ||
          r.row0 + r.partitions > c.rows || r.col0 + r.elements > c.cols)
        throw ExecuteError("step " + std::to_string(s) + ": a PSUM read (partitions " +
                           std::to_string(r.partition0) + "+" + std::to_string(r.partitions) + ", bank " +
                           std::to_string(r.bank) + ", " + std::to_string(r.elements) +
                           " elements) leaves PSUM or C");
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(r.partitions) * r.elements * 4);
      const std::size_t first = psum_address(geo, r.partition0, r.bank, r.offset) - isa::ArrayGeometry::kPsumBase;
      for (std::size_t p = 0; p < r.partitions; ++p)
        std::memcpy(&bytes[p * r.elements * 4], &psum[first + p * geo.psum_partition_bytes()], r.elements * 4);
      store_read(r, bytes.data(), c);
    }
  }
  return c;
}

}  // namespace pevp::host
