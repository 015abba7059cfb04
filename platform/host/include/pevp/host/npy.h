// NumPy .npy files for the GEMM operands and results (`pe-vp gemm --a a.npy --b b.npy --out c.npy`).
//
// Format: numpy's NEP 1 / `numpy.lib.format` description -- the magic "\x93NUMPY", a version byte pair, a
// little-endian header length (uint16 for version 1.0, uint32 for 2.0), an ASCII Python dict literal with exactly
// the keys 'descr', 'fortran_order' and 'shape', then the raw C-order data. Read: versions 1.0 and 2.0, dtypes
// '<f2', '<f4', '<f8', C order, 1-D or 2-D. Write: version 1.0, '<f4', 2-D, header padded to a multiple of 64 bytes
// as numpy does. Every malformed input throws NpyError whose message starts with the file name (or the name the
// caller gave a buffer) and says what is wrong; nothing is read past the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pevp/host/error.h"
#include "pevp/host/matrix.h"

namespace pevp::host {

// One array as stored: its descr, shape (1 or 2 dimensions) and the raw little-endian element bytes. The bytes are
// kept (rather than widened values) so that an fp32 file round-trips every bit pattern, signalling NaNs included.
struct NpyArray {
  std::string descr;               // "<f2", "<f4" or "<f8"
  std::vector<std::size_t> shape;  // (n) or (rows, cols)
  std::size_t item_bytes = 0;      // 2, 4 or 8
  std::vector<std::uint8_t> data;  // C order, shape product x item_bytes

  std::size_t size() const { return item_bytes ? data.size() / item_bytes : 0; }
  // Element i widened to double: exact for every dtype read (a NaN keeps its sign, not necessarily its payload).
  double value(std::size_t i) const;
};

// Parses the bytes of a .npy file; `name` is what error messages call it.
NpyArray parse_npy(const std::uint8_t* data, std::size_t size, const std::string& name);
// Reads the file: the header is checked first, and a shape whose data would pass the host-memory limit
// (files::kNpyInput) is refused before any data is read, as is a regular file whose size disagrees with it.
NpyArray read_npy(const std::string& path);

// One .npy file read in two steps, for a caller that weighs several files' shapes together before it reads any
// data (pe-vp gemm's host-memory estimate of A, B and C). Opening reads and checks the header; read() then reads
// the data, once. A FIFO (`--a <(...)`) can be read only once, so this is how its shape is known before its data.
class NpyFile {
 public:
  explicit NpyFile(const std::string& path);  // throws NpyError
  NpyFile(const NpyFile&) = delete;
  NpyFile& operator=(const NpyFile&) = delete;
  ~NpyFile();

  // descr, shape and item_bytes; no data (also after read()).
  const NpyArray& header() const;
  // A regular file (its size known before reading), not a FIFO or device.
  bool regular() const;
  // Whether read() checks at once that no byte follows the data (a FIFO's end comes when its writer closes it).
  enum class End { CheckNow, CheckLater };
  // The whole array (the checks of read_npy); throws NpyError, and std::logic_error when called twice. With
  // End::CheckLater, a FIFO is read up to its data and check_end() looks for trailing bytes afterwards: a writer
  // that keeps it open while it feeds the next file is not waited for.
  NpyArray read(End end = End::CheckNow);
  // read()'s checks without holding the data, for a caller that needs the shape alone (pe-vp gemm --mode timing): a
  // regular file's size is compared with the shape, a FIFO's data is read and dropped 64 KiB at a time (its writer
  // may feed the next file only after it). No host-memory limit applies: nothing is held. Either read() or skip(),
  // once.
  void skip(End end = End::CheckNow);
  // After read(End::CheckLater) or skip(End::CheckLater): throws NpyError when bytes follow the data (waits for the
  // writer to close).
  void check_end();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A 2-D array as an fp32 matrix. '<f2' and '<f4' convert exactly; '<f8' rounds to nearest-even fp32 (beyond the fp32
// range to +-Inf, as numpy's astype(float32) does; NaN stays a quiet NaN of the same sign). A 1-D array is an error
// (a GEMM operand needs (rows, cols); the message suggests reshape). `name` names the source in errors.
Matrix to_matrix(const NpyArray& array, const std::string& name);
// The (rows, cols) to_matrix gives the array, from its shape alone (a header will do); throws to_matrix's NpyError
// for a 1-D array.
std::pair<std::size_t, std::size_t> matrix_shape(const NpyArray& array, const std::string& name);
Matrix read_npy_matrix(const std::string& path);

// The bytes of a version 1.0 '<f4' C-order file holding `m` (every fp32 bit pattern kept).
std::vector<std::uint8_t> encode_npy(const Matrix& m);
void write_npy(const std::string& path, const Matrix& m);  // throws NpyError
// The same without an exception: false and `*error` ("<path>: <why>") on failure.
// The commands use it after a simulation, where a C++ exception on the main
// stack confuses AddressSanitizer about SystemC's thread stacks.
bool write_npy(const std::string& path, const Matrix& m, std::string* error);

}  // namespace pevp::host
