#include "pevp/platform/simulation_context.h"

#include <systemc>

// AddressSanitizer, as GCC and clang announce it.
#if defined(__SANITIZE_ADDRESS__)
#define PEVP_CONTEXT_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PEVP_CONTEXT_UNDER_ASAN 1
#endif
#endif

#ifdef PEVP_CONTEXT_UNDER_ASAN
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>
#endif

namespace pevp::platform {
namespace {

#ifdef PEVP_CONTEXT_UNDER_ASAN
using Range = std::pair<std::uintptr_t, std::uintptr_t>;  // [first, end)

// This process's mappings, from /proc/self/maps ("first-end perms ...", addresses in hex).
std::vector<Range> mappings() {
  std::vector<Range> ranges;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const std::size_t dash = line.find('-');
    if (dash == std::string::npos) continue;
    ranges.emplace_back(std::stoull(line.substr(0, dash), nullptr, 16),
                        std::stoull(line.substr(dash + 1), nullptr, 16));
  }
  return ranges;
}

// Clears the shadow of every range of `before` that `after` no longer maps. Deleting a context unmaps its threads'
// stacks, whose shadow still holds the poison of the frames that were suspended when the run stopped (libsystemc
// switches stacks without telling ASan, pevp/capi/stale_stack_poison.h); the next context's stacks, mapped at the
// same addresses, would inherit it as false reports. Unmapped memory has nothing to check.
void unpoison_unmapped(const std::vector<Range>& before, const std::vector<Range>& after) {
  for (const auto& [first, end] : before) {
    std::uintptr_t at = first;
    while (at < end) {
      std::uintptr_t gap_end = end;  // the end of the unmapped piece that starts at `at`, or of the mapped one
      bool mapped = false;
      for (const auto& [a, b] : after) {
        if (a <= at && at < b) {
          mapped = true;
          gap_end = std::min(end, b);
          break;
        }
        if (a > at && a < gap_end) gap_end = a;
      }
      if (!mapped) __asan_unpoison_memory_region(reinterpret_cast<void*>(at), gap_end - at);
      at = gap_end;
    }
  }
}

// Tells ASan again where this thread's stack is: a "switch" to the stack it runs on. After a run, ASan's bounds of
// the main thread's stack can be a coroutine stack's (libsystemc switches stacks without telling it), and with wrong
// bounds ASan skips the unpoisoning an exception needs ("ASan is ignoring requested __asan_handle_no_return"): every
// exception the next run throws here would leave its frames' redzones poisoned, to be reported falsely later.
void announce_this_stack() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* bottom = nullptr;
  std::size_t size = 0;
  const bool known = pthread_attr_getstack(&attr, &bottom, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!known) return;
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
}
#endif

}  // namespace

void fresh_simulation_context() {
  // sc_get_curr_simcontext() makes a context on its first use and hands out sc_curr_simcontext after that; the
  // default global context is the one sc_elab_and_sim and the kernel's own objects were made in.
#ifdef PEVP_CONTEXT_UNDER_ASAN
  const std::vector<Range> before = mappings();
  delete sc_core::sc_curr_simcontext;
  unpoison_unmapped(before, mappings());
  announce_this_stack();
#else
  delete sc_core::sc_curr_simcontext;
#endif
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  // Counts of reports (errors, warnings) belong to a run; the actions set by the program stay.
  sc_core::sc_report_handler::initialize();
}

}  // namespace pevp::platform
