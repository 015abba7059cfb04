// AddressSanitizer and SystemC's coroutines. The platform's thread processes run on stacks that the uninstrumented
// libsystemc switches to without telling ASan (no __sanitizer_start_switch_fiber). An exception thrown there --
// the host thread's requests end that way whenever the driver refuses something -- makes ASan lose the main
// stack's bounds ("ASan is ignoring requested __asan_handle_no_return ... False positive error reports may
// follow", google/sanitizers issue 189); exceptions later thrown on the main stack (a dropped connection, a
// malformed payload) then leave the redzones of the frames they unwind poisoned, and the next frame to land there
// is reported as a stack-use-after-scope or stack-buffer-overflow that is not one, aborting a sanitizer build of
// the server. clear_stale_stack_poison() unpoisons the main stack below the caller's frame, where the frames of
// what the caller does next will be (each poisons its own redzones again as it is entered, so every check stays
// on). Called between requests by the server and the in-process VP on the main stack, and by the host thread on
// its own stack before each request (an exception thrown there leaves that stack's redzones poisoned the same
// way); `below` is how far down to clear, which must stay inside the caller's stack. Without ASan it does nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__SANITIZE_ADDRESS__)
#define PEVP_HAS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PEVP_HAS_ASAN 1
#endif
#endif
#ifdef PEVP_HAS_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace pevp::capi {

// The default is deeper than a request's frames on the main stack.
__attribute__((noinline)) inline void clear_stale_stack_poison(std::size_t below = std::size_t{1} << 20) {
#ifdef PEVP_HAS_ASAN
  volatile char mark = 0;
  const auto here = reinterpret_cast<std::uintptr_t>(&mark);
  __asan_unpoison_memory_region(reinterpret_cast<void*>(here - below), below);
#else
  (void)below;
#endif
}

}  // namespace pevp::capi
