#include "pevp/isa/encode.h"

#include <algorithm>
#include <cctype>
#include <cstdint>


namespace pevp::isa {


Encoder::Encoder(Generation g, Opcode op) : gen_(g) {
  if (!exists_in(op, g))
    throw EncodeError(std::string(name(op)) + " is not an instruction of " + std::string(name(g)));
  layout_ = &layout_of(g, struct_of(op));
  bytes_[0] = static_cast<std::uint8_t>(op);
  bytes_[1] = kInstructionBytes / 4;  // header.inst_word_len
}

Encoder& Encoder::set(std::string_view path, std::int64_t value) {
  for (const Leaf& leaf : leaves_of(*layout_, bytes_.data())) {
    if (leaf.path != path) continue;
    if (leaf.path == "header.opcode") throw EncodeError("header.opcode is fixed by the Encoder's opcode");
    if (!write_leaf(bytes_.data(), leaf, value))
      throw EncodeError(std::string(path) + " = " + std::to_string(value) + " does not fit its " +
                        std::to_string(leaf.bit_width ? leaf.bit_width : 8 * leaf.size) + "-bit field" +
                        (leaf.kind == ValueKind::Reserved ? " (reserved: must be 0)" : ""));
    return *this;
  }
  throw EncodeError(layout_->c_name + " has no field '" + std::string(path) + "'");
}

const Leaf* Encoder::leaf(std::string_view path) const {
  for (const Leaf& l : leaves_of(*layout_, bytes_.data()))
    if (l.path == path) return &l;
  return nullptr;
}

Encoder& Encoder::set_reserved(std::string_view path, const std::vector<std::uint8_t>& bytes) {
  const Leaf* l = leaf(path);
  if (l == nullptr) throw EncodeError(layout_->c_name + " has no field '" + std::string(path) + "'");
  if (l->kind != ValueKind::Reserved || bytes.size() != l->size)
    throw EncodeError(std::string(path) + ": expected " + std::to_string(l->size) + " reserved bytes");
  std::copy(bytes.begin(), bytes.end(), bytes_.begin() + l->offset);
  return *this;
}

const std::string& Encoder::struct_name() const { return layout_->c_name; }

}  // namespace pevp::isa
