// libFuzzer harness: the .npy reader (host::parse_npy, npy.h) on arbitrary bytes. Its contract: every malformed
// input throws host::NpyError (a host::HostError) whose message starts with the name the caller gave, and nothing
// is read past the buffer. Beyond that, for an array
// it accepts:
//   - the data holds exactly shape product x item size bytes, and every element widens (NpyArray::value);
//   - a 2-D array converts to a matrix (to_matrix), a 1-D one is refused with an NpyError;
//   - the matrix written back (encode_npy) parses again to the same shape and the same fp32 bits; an '<f4' file
//     keeps every bit pattern, so its data bytes come back unchanged.
// No other exception is caught: a std::bad_alloc or std::out_of_range escaping is a finding.
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "pevp/host/npy.h"

namespace {

using namespace pevp;

constexpr const char* kTarget = "fuzz_npy";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  host::NpyArray a;
  try {
    a = host::parse_npy(data, size, "fuzz.npy");
  } catch (const host::NpyError& e) {
    if (std::string(e.what()).rfind("fuzz.npy: ", 0) != 0)
      fuzz::fail(kTarget, std::string("an error that does not start with the name: ") + e.what());
    return 0;
  }
  if (a.shape.empty() || a.shape.size() > 2) fuzz::fail(kTarget, "accepted a shape of " + std::to_string(a.shape.size()) + " dimensions");
  if (a.item_bytes != 2 && a.item_bytes != 4 && a.item_bytes != 8) fuzz::fail(kTarget, "accepted item size " + std::to_string(a.item_bytes));
  std::size_t count = 1;
  for (std::size_t d : a.shape) count *= d;
  if (a.data.size() != count * a.item_bytes || a.size() != count)
    fuzz::fail(kTarget, "data of " + std::to_string(a.data.size()) + " bytes for " + std::to_string(count) + " elements");
  for (std::size_t i = 0; i < a.size(); ++i) (void)a.value(i);

  host::Matrix m;
  try {
    m = host::to_matrix(a, "fuzz.npy");
  } catch (const host::NpyError&) {
    if (a.shape.size() == 2) fuzz::fail(kTarget, "to_matrix refused a 2-D array");
    return 0;
  }
  if (a.shape.size() != 2) fuzz::fail(kTarget, "to_matrix accepted a 1-D array");
  if (m.rows != a.shape[0] || m.cols != a.shape[1] || m.data.size() != count) fuzz::fail(kTarget, "to_matrix changed the shape");

  const std::vector<std::uint8_t> bytes = host::encode_npy(m);
  const host::NpyArray back = host::parse_npy(bytes.data(), bytes.size(), "encoded.npy");  // must not throw
  if (back.descr != "<f4" || back.shape != a.shape) fuzz::fail(kTarget, "encode_npy -> parse_npy changed descr or shape");
  const host::Matrix again = host::to_matrix(back, "encoded.npy");
  if (again.data.size() != m.data.size() ||
      (!m.data.empty() && std::memcmp(again.data.data(), m.data.data(), m.data.size() * sizeof(float)) != 0))
    fuzz::fail(kTarget, "encode_npy -> parse_npy -> to_matrix changed the fp32 bits");
  if (a.descr == "<f4" && back.data != a.data) fuzz::fail(kTarget, "an '<f4' file did not keep its bit patterns");
  return 0;
}
