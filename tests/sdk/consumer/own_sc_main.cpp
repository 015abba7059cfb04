// An own sc_main against the installed SDK: this program's own bus master (a TLM initiator socket and the driver
// library on it) bound to the platform module's system bus, running C[8x24] = A[8x40] @ B[40x24] as a driver
// would -- SBUF loads over the bus, arming, the tiled program, the wait, the PSUM read-back -- on small integers,
// so the result is exact and checked against the integer product computed here. Exit status 0 when it matches.
#include <cstdio>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pevp/host/gemm_plan.h"
#include "pevp/host/operands.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/platform.h"

namespace {

using namespace pevp;

constexpr std::size_t M = 8, K = 40, N = 24;

struct Master : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Master> socket;
  platform::Driver driver;
  const host::GemmPlan& plan;
  const host::EncodedOperand &a, &b;
  host::Matrix c{M, N};
  bool ok = false;

  SC_HAS_PROCESS(Master);
  Master(sc_core::sc_module_name n, const platform::AddressMap& map, const sc_core::sc_signal_in_if<bool>& irq,
         const host::GemmPlan& p, const host::EncodedOperand& ea, const host::EncodedOperand& eb)
      : sc_core::sc_module(n), socket("socket"), driver(socket, map, irq), plan(p), a(ea), b(eb) {
    SC_THREAD(run);
  }

  void run() {
    const isa::ArrayGeometry& geo = *plan.options.geometry;
    const auto& map = driver.map();
    driver.arm();
    std::vector<std::uint8_t> scratch, rows;
    for (const host::Step& step : plan.steps) {
      for (const host::SbufLoad& load : step.loads) {
        const host::LoadRows r = host::load_rows(load, a, b, scratch);
        const std::uint32_t at = host::sbuf_address(geo, load.partition0, load.offset) - isa::ArrayGeometry::kSbufBase;
        driver.write_rows(map.sbuf + at, geo.sbuf_partition_bytes, r.data, r.stride, load.bytes_per_partition(),
                          load.partitions());
      }
      driver.submit(step.program);
      const platform::Completion done = driver.wait_idle();
      if (done.error || done.timed_out) {
        std::printf("the SEQ reported %s\n", done.error ? driver.error_record()->describe().c_str() : "a timeout");
        sc_core::sc_stop();
        return;
      }
      driver.clear_done();
      for (const host::PsumRead& rd : step.reads) {
        const std::size_t per = std::size_t{rd.elements} * 4;
        rows.resize(rd.partitions * per);
        const std::uint32_t at =
            host::psum_address(geo, rd.partition0, rd.bank, rd.offset) - isa::ArrayGeometry::kPsumBase;
        driver.read_rows(map.psum + at, geo.psum_partition_bytes(), rows.data(), per, per, rd.partitions);
        host::store_read(rd, rows.data(), c);
      }
    }
    ok = true;
    sc_core::sc_stop();
  }
};

}  // namespace

int sc_main(int, char*[]) {
  // Small integers: every product and sum is exact in bf16 inputs and fp32 accumulation.
  host::Matrix A(M, K), B(K, N);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t k = 0; k < K; ++k) A.data[i * K + k] = static_cast<float>(static_cast<int>((i * 3 + k) % 7) - 3);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t j = 0; j < N; ++j) B.data[k * N + j] = static_cast<float>(static_cast<int>((k + 2 * j) % 5) - 2);

  const platform::VpConfig config = platform::preset(isa::Generation::MARIANA);
  host::GemmOptions o;
  o.gen = config.gen();
  o.geometry = config.geometry;
  o.dtype = isa::Dtype::BFLOAT16;
  const host::GemmPlan plan = host::plan_gemm({M, K, N}, o);
  const host::EncodedOperand ea = host::encode_operand(A, o.gen, o.dtype), eb = host::encode_operand(B, o.gen, o.dtype);

  platform::Platform vp("vp", config);
  Master master("master", config.platform.map, vp.seq.irq, plan, ea, eb);
  master.socket.bind(vp.bus.target);
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_start();
  if (!master.ok) return 1;

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      int want = 0;
      for (std::size_t k = 0; k < K; ++k)
        want += static_cast<int>(A.data[i * K + k]) * static_cast<int>(B.data[k * N + j]);
      wrong += master.c.data[i * N + j] != static_cast<float>(want);
    }
  std::printf("own_sc_main: C[%zux%zu] = A @ B on the installed platform: %zu of %zu elements wrong, at %s\n", M, N,
              wrong, M * N, sc_core::sc_time_stamp().to_string().c_str());
  return wrong == 0 ? 0 : 1;
}
