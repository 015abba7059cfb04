// The way out of an allocation failure, for the pe-vp program. Destructors run while std::bad_alloc unwinds, and
// some allocate as they free (nlohmann::json's, from a noexcept destructor): with the memory exhausted they end in
// std::terminate, not in the command's "pe-vp: out of host memory". So the program keeps a block in reserve that
// the first failure gives back before it throws (std::set_new_handler), and allocations made outside operator new
// (mmap, aligned allocators) follow operator new's protocol on failure, so they give it back too.
#pragma once

namespace pevp::buffers {

// Reserves the block (4 MiB of address space, untouched) and installs the new_handler that gives it back and throws
// std::bad_alloc. For a program's main: a library does not install process-wide handlers. Thread-safe; calling it
// again re-reserves a block given back (pe-vp serve, after a request that ran out of memory).
void reserve_oom_headroom();

// Whether reserve_oom_headroom installed the process's new_handler (a library re-reserves only then).
bool oom_headroom_installed();

// For an allocation that failed outside operator new: calls the installed new_handler as operator new does (which
// frees memory and returns, so the caller retries, or throws), or throws std::bad_alloc when there is none.
void handle_allocation_failure();

}  // namespace pevp::buffers
