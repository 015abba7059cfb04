#include "pevp/buffers/oom_headroom.h"

#include <atomic>
#include <cstddef>
#include <new>

namespace pevp::buffers {
namespace {

constexpr std::size_t kHeadroomBytes = std::size_t{4} << 20;
std::atomic<char*> g_headroom{nullptr};

// One thread gives the block back (the exchange), every failing thread throws. Kept installed: with no block left
// it throws at once, as operator new does without a handler, and std::nothrow new then returns null as before.
void give_back_headroom_and_throw() {
  delete[] g_headroom.exchange(nullptr);
  throw std::bad_alloc();
}

}  // namespace

void reserve_oom_headroom() {
  std::set_new_handler(give_back_headroom_and_throw);
  if (g_headroom.load() != nullptr) return;
  char* block = new (std::nothrow) char[kHeadroomBytes];  // untouched: address space, not memory
  if (block == nullptr) return;                              // nothing to spare now; the next call tries again
  delete[] g_headroom.exchange(block);
}

bool oom_headroom_installed() { return std::get_new_handler() == give_back_headroom_and_throw; }

void handle_allocation_failure() {
  const std::new_handler handler = std::get_new_handler();
  if (handler == nullptr) throw std::bad_alloc();
  handler();
}

}  // namespace pevp::buffers
