#include "pevp/qemu_device/serve.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <thread>

#include "pevp/mpqemu/doorbell.h"
#include "pevp/trace/trace_events.h"

namespace pevp::qemu_device {

using mpqemu::Command;
using mpqemu::kAllOnes;

namespace {

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::uint64_t to_ps(const sc_core::sc_time& t) {
  return static_cast<std::uint64_t>(t / sc_core::sc_time(1, sc_core::SC_PS));
}

}  // namespace

// ---- the link's side ------------------------------------------------------------------------------------------

void LinkServer::signal_intx() {
  std::lock_guard<std::mutex> lock(intx_mutex);
  if (!intx.valid()) return;
  const std::uint64_t one = 1;
  if (::write(intx.get(), &one, sizeof one) < 0) {
    // A full eventfd counter only loses a duplicate edge; nothing else can fail on a valid eventfd.
  }
}

void LinkServer::dispatch(mpqemu::Message& m) {
  switch (m.command()) {
    case Command::SyncSysmem: {
      const std::vector<mpqemu::SysmemRegion> regions = mpqemu::decode_sysmem(m.payload, m.fds.size());
      if (const std::string why = guest_ram.sync(regions, std::move(m.fds)); !why.empty() && log != nullptr)
        *log << "pe-vp qemu-device: " << why << "; DMA to guest memory fails until the next SYNC_SYSMEM\n";
      if (log_syncs && log != nullptr) {
        *log << "pe-vp qemu-device: SYNC_SYSMEM:";
        for (const mpqemu::SysmemRegion& r : regions) *log << " [" << hex(r.gpa) << ", +" << hex(r.size) << ")";
        *log << '\n';
      }
      // The simulation switches to the new layout between two of its accesses, never in the middle of one.
      std::shared_ptr<const mpqemu::GuestRamLayout> layout = guest_ram.layout();
      device.post([this, layout] {
        pcie::RamLayout l;
        for (const mpqemu::GuestRamRegion& r : layout->regions) l.regions.push_back({r.gpa, r.size, r.host});
        l.keep_alive = layout;
        device.host_memory.install(std::move(l));
      });
      return;
    }
    case Command::SetIrqfd: {
      // fds[0] raises INTx under KVM; fds[1], the resample eventfd, is not needed: the device signals edges.
      std::lock_guard<std::mutex> lock(intx_mutex);
      intx = std::move(m.fds[0]);
      return;
    }
    case Command::PciCfgRead: {
      const mpqemu::ConfigAccess c = mpqemu::decode_config(m.payload);
      const std::uint64_t v = device.call(
          [&]() -> std::uint64_t {
            if (!pcie::ConfigSpace::check(c.address, c.length).empty()) ++config_refused;
            return device.function.config_read(c.address, c.length);
          },
          kAllOnes);
      // A refused read answers all-ones in the access's width, as config_read returns it.
      reply_ok_ = link.reply(v);
      return;
    }
    case Command::PciCfgWrite: {
      const mpqemu::ConfigAccess c = mpqemu::decode_config(m.payload);
      const std::uint64_t v = device.call(
          [&]() -> std::uint64_t {
            if (device.function.config_write(c.address, c.value, c.length)) return 0;
            ++config_refused;
            return kAllOnes;
          },
          kAllOnes);
      reply_ok_ = link.reply(v);
      return;
    }
    case Command::BarRead:
    case Command::BarWrite: {
      const mpqemu::BarAccess b = mpqemu::decode_bar(m.payload);
      const bool write = m.command() == Command::BarWrite;
      const std::uint64_t v = device.call(
          [&]() -> std::uint64_t {
            if (!b.memory) {  // the device has no I/O BAR
              ++bar_failures;
              return kAllOnes;
            }
            std::uint64_t value = b.value;
            const pcie::BarStatus s = device.host_access(write, b.address, b.size, value);
            if (s != pcie::BarStatus::Ok) ++bar_failures;
            if (write) return s == pcie::BarStatus::Ok ? 0 : kAllOnes;
            return value;
          },
          kAllOnes);
      reply_ok_ = link.reply(v);
      return;
    }
    case Command::DeviceReset: {
      const std::uint64_t v = device.call(
          [&]() -> std::uint64_t {
            ++resets;
            const std::string why = device.reset();
            if (why.empty()) return 0;
            ++reset_failures;
            if (log != nullptr) *log << "pe-vp qemu-device: DEVICE_RESET: " << why << '\n';
            return kAllOnes;
          },
          kAllOnes);
      reply_ok_ = link.reply(v);
      return;
    }
    case Command::Ret: return;  // validation refuses it before dispatch
  }
}

std::string LinkServer::serve(int stop_fd) {
  using Kind = mpqemu::Link::Received::Kind;
  std::string why;
  for (;;) {
    mpqemu::Link::Received r = link.receive(stop_fd);
    if (r.kind == Kind::Message) {
      const std::string what = mpqemu::command_name(r.message.cmd);
      reply_ok_ = true;
      dispatch(r.message);
      if (!reply_ok_) {
        why = "QEMU left before the reply to its " + what + " could be sent";
        break;
      }
      continue;
    }
    if (r.kind == Kind::Malformed) {
      if (log != nullptr) *log << "pe-vp qemu-device: message refused: " << r.why << '\n';
      if (mpqemu::expects_reply(r.cmd) && !link.reply(kAllOnes)) {
        why = "QEMU left before the reply to a refused message could be sent";
        break;
      }
      continue;
    }
    if (r.kind == Kind::Closed) break;
    why = r.kind == Kind::Stopped ? "stopped" : r.why;
    break;
  }
  device.stop();
  return why;
}

nlohmann::json pcie_stats(const QemuDevice& d, const LinkServer& s) {
  using nlohmann::json;
  const pcie::FunctionStats& f = d.function.stats();
  json bars = json::object();
  for (unsigned b = 0; b < pcie::kBarSlots; ++b) {
    const pcie::BarWindow& w = d.function.config().bars[b];
    if (w.size == 0) continue;
    bars["bar" + std::to_string(b)] = {{"window", w.name}, {"bytes", w.size},
                                       {"reads", f.bars[b].reads}, {"writes", f.bars[b].writes},
                                       {"bus_errors", f.bars[b].errors}};
  }
  const pcie::HostMemoryStats& h = d.host_memory.stats();
  const mpqemu::LinkStats& l = s.link.stats();
  json messages = json::object();
  for (std::int32_t c = 0; c < mpqemu::kCommandCount; ++c)
    if (l.received[c] != 0) messages[mpqemu::command_name(c)] = l.received[c];
  const mpqemu::GuestRamStats g = s.guest_ram.stats();
  return {
      {"bars", bars},
      {"refused", {{"memory_space_disabled", f.disabled}, {"not_in_a_bar", f.not_decoded},
                   {"bad_size", f.bad_size}, {"failed_accesses", s.bar_failures}}},
      {"config", {{"reads", f.config_reads}, {"writes", f.config_writes}, {"refused", f.config_refused}}},
      {"dma_to_host", {{"reads", h.reads}, {"writes", h.writes}, {"read_bytes", h.read_bytes},
                       {"write_bytes", h.write_bytes}, {"errors", h.errors}, {"layouts", h.layouts}}},
      {"link", {{"messages", messages}, {"malformed", l.malformed}, {"replies", l.replies},
                {"fds_closed_unused", l.fds_closed_unused}}},
      {"guest_ram", {{"syncs", g.syncs}, {"refused", g.refused}, {"mapped", g.mapped}, {"reused", g.reused}}},
      {"resets", {{"done", s.resets - s.reset_failures}, {"failed", s.reset_failures}}},
      {"interrupts", {{"seq_vector", d.interrupt_stats().raised[kSeqVector]},
                      {"dma_vector", d.interrupt_stats().raised[kDmaVector]}}},
  };
}

// ---- the command ---------------------------------------------------------------------------------------------

namespace {

// The signal handlers' view: where to say "stop" and which QEMU to end.
std::atomic<int> g_stop_fd{-1};
std::atomic<pid_t> g_qemu{-1};

extern "C" void qemu_device_on_stop_signal(int) {
  const int saved = errno;
  const std::uint64_t one = 1;
  if (const int fd = g_stop_fd.load(); fd >= 0) {
    if (::write(fd, &one, sizeof one) < 0) {
    }
  }
  if (const pid_t q = g_qemu.load(); q > 0) ::kill(q, SIGTERM);
  errno = saved;
}

// Draws the guest's BAR accesses, the device's DMA to guest memory and the vectors on the recorder's trace.
void hook_trace(trace::TraceEventWriter& t, QemuDevice& d) {
  d.function.observer = [&t, &d](const pcie::BarRecord& r) {
    const bool decoded = r.status != pcie::BarStatus::Disabled && r.status != pcie::BarStatus::NotDecoded &&
                         r.status != pcie::BarStatus::BadSize;
    const trace::TrackId track =
        decoded ? t.track("PCIe", "BAR" + std::to_string(r.bar) + " " + d.function.config().bars[r.bar].name)
                : t.track("PCIe", "refused accesses");
    const std::uint64_t start = to_ps(r.start), dur = std::max<std::uint64_t>(to_ps(r.end) - start, 1000);
    t.slice(track, std::string(r.write ? "W " : "R ") + hex(r.offset), "pcie", start, dur,
            {{"address", hex(r.address)}, {"size", std::int64_t{r.size}}, {"value", hex(r.value)},
             {"status", std::string(pcie::name(r.status))}});
  };
  d.host_memory.observer = [&t](const pcie::HostAccess& a) {
    t.instant(t.track("PCIe", "device DMA to guest memory"),
              std::string(a.write ? "write " : "read ") + std::to_string(a.bytes) + " B", to_ps(a.at),
              {{"address", hex(a.address)}, {"ok", std::int64_t{a.ok}}});
  };
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "ended";
}

bool is_socket(int fd) {
  struct stat st{};
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

int run_qemu_device(const platform::VpConfig& config, const QemuDeviceOptions& o, std::ostream& out,
                    std::ostream& err) {
  const bool spawn = !o.qemu_argv.empty();
  if (spawn == (o.proxy_fd >= 0 || o.ivshmem_fd >= 0) || (!spawn && (o.proxy_fd < 0 || o.ivshmem_fd < 0))) {
    err << "pe-vp qemu-device: give QEMU's command line after -- , or both --proxy-fd and --ivshmem-fd\n";
    return 2;
  }
  if (const std::string why = platform::Recorder::check_paths(o.outputs); !why.empty()) {
    err << "pe-vp qemu-device: " << why << '\n';
    return 2;
  }
  if (const std::string why = platform::Recorder::check_config(o.outputs, config); !why.empty()) {
    err << "pe-vp qemu-device: " << why << '\n';
    return 2;
  }
  mpqemu::UniqueFd proxy_dev, proxy_qemu, ivs_dev, ivs_qemu;
  if (spawn) {
    int a[2], b[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) != 0 ||
        ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b) != 0) {
      err << "pe-vp qemu-device: socketpair: " << std::strerror(errno) << '\n';
      return 2;
    }
    proxy_dev.reset(a[0]);
    proxy_qemu.reset(a[1]);
    ivs_dev.reset(b[0]);
    ivs_qemu.reset(b[1]);
  } else {
    for (const auto& [fd, option] : {std::pair{o.proxy_fd, "--proxy-fd"}, std::pair{o.ivshmem_fd, "--ivshmem-fd"}})
      if (!is_socket(fd)) {
        err << "pe-vp qemu-device: " << option << ' ' << fd << " is not an open socket\n";
        return 2;
      }
    proxy_dev.reset(o.proxy_fd);
    ivs_dev.reset(o.ivshmem_fd);
  }
  std::string error;
  std::unique_ptr<mpqemu::Doorbell> doorbell = mpqemu::Doorbell::create(kVectors, &error);
  if (!doorbell || !(error = doorbell->greet(ivs_dev.get())).empty()) {
    err << "pe-vp qemu-device: " << error << '\n';
    return 2;
  }

  std::unique_ptr<QemuDevice> device;
  try {
    device = std::make_unique<QemuDevice>("pevp", config);
  } catch (const std::exception& e) {
    err << "pe-vp qemu-device: " << e.what() << '\n';
    return 2;
  }
  platform::Recorder recorder(device->platform, o.outputs);
  if (trace::TraceEventWriter* t = recorder.trace()) hook_trace(*t, *device);
  mpqemu::Link link(std::move(proxy_dev));
  LinkServer server{*device, link};
  server.log = &err;
  server.log_syncs = o.log_messages;
  trace::TraceEventWriter* trace = recorder.trace();
  device->raise = [&](unsigned v) {
    doorbell->signal(v);
    if (v == kSeqVector) server.signal_intx();
    if (trace != nullptr)
      trace->instant(trace->track("PCIe", "interrupts"), v == kSeqVector ? "SEQ vector" : "DMA vector",
                     to_ps(sc_core::sc_time_stamp()));
  };

  mpqemu::UniqueFd stop(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  g_stop_fd = stop.get();
  struct sigaction action{}, old_int{}, old_term{};
  action.sa_handler = qemu_device_on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);

  pid_t qemu = -1;
  if (spawn) {
    std::vector<std::string> args = o.qemu_argv;
    const std::vector<std::string> device_args = {
        "-device", "x-pci-proxy-dev,id=pevp0,fd=" + std::to_string(proxy_qemu.get()),
        "-chardev", "socket,id=pevpirq,fd=" + std::to_string(ivs_qemu.get()),
        "-device", "ivshmem-doorbell,chardev=pevpirq,vectors=" + std::to_string(kVectors)};
    args.insert(args.end(), device_args.begin(), device_args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    qemu = ::fork();
    if (qemu == 0) {
      // The child: QEMU inherits its two ends (and nothing of the device's: those are close-on-exec).
      ::fcntl(proxy_qemu.get(), F_SETFD, 0);
      ::fcntl(ivs_qemu.get(), F_SETFD, 0);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::execvp(argv[0], argv.data());
      const char* msg = "pe-vp qemu-device: cannot start QEMU: ";
      if (::write(2, msg, std::strlen(msg)) < 0 || ::write(2, argv[0], std::strlen(argv[0])) < 0 ||
          ::write(2, "\n", 1) < 0) {
      }
      ::_exit(127);
    }
    if (qemu < 0) {
      err << "pe-vp qemu-device: fork: " << std::strerror(errno) << '\n';
      return 2;
    }
    g_qemu = qemu;
    proxy_qemu.reset();
    ivs_qemu.reset();
    out << "pe-vp qemu-device: serving " << o.qemu_argv[0] << " (pid " << qemu << ")" << std::endl;
  } else {
    out << "pe-vp qemu-device: serving the proxy on fd " << o.proxy_fd << std::endl;
  }

  std::string link_end;
  std::thread link_thread([&] { link_end = server.serve(stop.get()); });
  std::string sim_error;
  try {
    device->run();
  } catch (const std::exception& e) {
    sim_error = e.what();
  }
  const std::uint64_t one = 1;
  if (::write(stop.get(), &one, sizeof one) < 0) {
  }
  link_thread.join();

  int status = 0;
  std::string qemu_end;
  if (qemu > 0) {
    // QEMU ends by itself when it closed the link; otherwise (the link broke, a signal, a failed simulation) it is
    // told to.
    if (!link_end.empty() || !sim_error.empty()) ::kill(qemu, SIGTERM);
    while (::waitpid(qemu, &status, 0) < 0 && errno == EINTR) {
    }
    g_qemu = -1;
    qemu_end = "QEMU " + describe_status(status);
  }
  g_stop_fd = -1;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);

  nlohmann::json stats = platform::run_stats(device->platform);
  stats["pcie"] = pcie_stats(*device, server);
  std::string write_error;
  const bool written = recorder.finish(&write_error, &stats);

  const nlohmann::json& p = stats["pcie"];
  std::uint64_t accesses = 0;
  for (const auto& [name, bar] : p["bars"].items()) accesses += bar["reads"].get<std::uint64_t>() + bar["writes"].get<std::uint64_t>();
  err << "pe-vp qemu-device: " << (link_end.empty() ? std::string("the proxy closed the link") : link_end)
      << (qemu_end.empty() ? "" : "; " + qemu_end) << "; " << accesses << " BAR accesses, "
      << p["dma_to_host"]["read_bytes"].get<std::uint64_t>() + p["dma_to_host"]["write_bytes"].get<std::uint64_t>()
      << " bytes of DMA to guest memory, simulated time " << sc_core::sc_time_stamp().to_string() << '\n';
  if (!sim_error.empty()) err << "pe-vp qemu-device: the simulation failed: " << sim_error << '\n';
  if (!written) err << "pe-vp qemu-device: " << write_error << '\n';

  if (!sim_error.empty()) return 3;
  if (qemu > 0) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 3;
  }
  if (!written) return 3;
  return link_end.empty() || link_end == "stopped" ? 0 : 3;
}

}  // namespace pevp::qemu_device
