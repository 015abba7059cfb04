// Encoding instructions. The Encoder sets leaves by the same paths the decoder
// prints, so anything decoded can be re-encoded (the round trip is tested for
// every struct of every generation); builders.h has typed helpers on top.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pevp/isa/decode.h"

namespace pevp::isa {

// A field that cannot be set: unknown path, value out of range, bad name.
class EncodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Encoder {
 public:
  // Starts from all-zero bytes with header.opcode and header.inst_word_len set.
  // Throws EncodeError when `op` is not an instruction of `g`.
  Encoder(Generation g, Opcode op);

  // Sets a leaf by path. For a MEM_PATTERN3D union set start_addr (with its
  // marker bits) first: it selects the member whose other leaves are then
  // settable. Throws EncodeError naming the path on an unknown path or a value
  // that does not fit.
  Encoder& set(std::string_view path, std::int64_t value);
  // Sets a reserved leaf's bytes as they are (a negative test's non-zero
  // reserved bytes). Throws EncodeError unless `path` is a reserved leaf of
  // exactly bytes.size() bytes.
  Encoder& set_reserved(std::string_view path, const std::vector<std::uint8_t>& bytes);
  // The leaf at `path` as the bytes set so far lay it out (union members follow
  // start_addr), or null.
  const Leaf* leaf(std::string_view path) const;
  const std::string& struct_name() const;  // "S3D3_MM"

  const RawInstruction& bytes() const { return bytes_; }
  Decoded decoded() const { return decode(gen_, bytes_); }

 private:
  Generation gen_;
  const StructLayout* layout_;
  RawInstruction bytes_{};
};

}  // namespace pevp::isa
