// The byte-array side of a TLM-2.0 memory target, shared by SBUF/PSUM (memory::Memory) and device memory
// (hbm::Dram): which b_transport a memory of `size` bytes refuses and why, the copy with byte enables, and the DMI
// grant of the whole array. Each target keeps its own timing and its own reporting.
#pragma once

#include <cstdint>
#include <optional>

#include <tlm>

namespace pevp::memory {

struct Refusal {
  tlm::tlm_response_status status;
  const char* what;  // the message ID's last part: "addr_error", "burst_error", "null_data", "byte_enable_error"
};

// Why `trans` cannot be served by a memory of `size` bytes, checked before anything moves: an address range outside
// it, a streaming width below the length (not modelled) or a zero length, no data pointer, a byte-enable value that
// is neither enabled nor disabled (or an empty enable array). nullopt: serve it (a TLM_IGNORE_COMMAND in range needs
// nothing more).
std::optional<Refusal> check_access(const tlm::tlm_generic_payload& trans, std::uint64_t size);

// Moves the bytes of a checked read or write between the transaction and `mem` (the memory's byte at the
// transaction's address). Byte enables repeat modulo their length; a disabled byte is left alone on both sides (a
// read keeps the initiator's byte).
void copy_access(tlm::tlm_generic_payload& trans, std::uint8_t* mem);

// transport_dbg over the array [0, size) at `data`: the bytes of the range that lie inside it, none for an ignore
// command or no data pointer; returns how many moved.
unsigned int debug_access(tlm::tlm_generic_payload& trans, std::uint8_t* data, std::uint64_t size);

// Grants DMI read/write over the whole array [0, size) at `data`, or denies everything from `size` up when the
// transaction's address is past it (so the initiator does not ask again). Returns whether granted; the latencies
// are the caller's.
bool grant_whole(const tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi, std::uint8_t* data, std::uint64_t size);

}  // namespace pevp::memory
