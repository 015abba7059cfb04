// .npy I/O: the bytes written match numpy's own layout, files round-trip every fp32 bit pattern, hand-built
// version 1.0 / 2.0 files of every readable dtype decode to the expected values, and every class of malformed input
// gives an NpyError naming the file and the problem.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "host_test_util.h"
#include "pevp/host/npy.h"

namespace {

using namespace host_test;

// A .npy file built by hand (independently of encode_npy): magic, version, little-endian header length of 2 (v1) or
// 4 (v2) bytes, the header text, then the data.
std::vector<std::uint8_t> npy_file(const std::string& header, const std::vector<std::uint8_t>& data, int major = 1,
                                   int minor = 0) {
  std::vector<std::uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(major),
                                   static_cast<std::uint8_t>(minor)};
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < len_bytes; ++i) out.push_back(static_cast<std::uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::vector<std::uint8_t> le_bytes(std::uint64_t v, int n) {
  std::vector<std::uint8_t> out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  return out;
}

std::vector<std::uint8_t> f4_data(const std::vector<std::uint32_t>& bits) {
  std::vector<std::uint8_t> out;
  for (auto u : bits) {
    const auto b = le_bytes(u, 4);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

// Per process: ctest runs the tests in parallel processes.
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "pevp_host_" + std::to_string(::getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

const std::string kF4x2x2 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";

TEST(Npy, EncodeMatchesNumpyLayout) {
  host::Matrix m(2, 3);
  for (std::size_t i = 0; i < 6; ++i) m.data[i] = static_cast<float>(i) + 0.5f;
  const auto bytes = host::encode_npy(m);
  // numpy.save of a float32 (2, 3) array: 10-byte prefix + 118-byte header = 128, then 24 data bytes.
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 6), "\x93NUMPY");
  EXPECT_EQ(bytes[6], 1);
  EXPECT_EQ(bytes[7], 0);
  EXPECT_EQ(bytes[8] | bytes[9] << 8, 118);
  const std::string header(bytes.begin() + 10, bytes.begin() + 128);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(header.substr(0, dict.size()), dict);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(header.find_first_not_of(' ', dict.size()), header.size() - 1);
  // 2.5f = 0x40200000, little-endian at data offset 8.
  EXPECT_EQ(std::vector<std::uint8_t>(bytes.begin() + 136, bytes.begin() + 140),
            (std::vector<std::uint8_t>{0x00, 0x00, 0x20, 0x40}));
}

TEST(Npy, FileRoundTripKeepsEveryBitPattern) {
  const std::vector<std::uint32_t> bits = {0x3F800000, 0x80000000, 0x7F800000, 0xFF800000, 0x00000001,
                                           0x7F800001 /* signalling NaN */, 0xFFFFFFFF, 0x7FC00000, 0x3EAAAAAB};
  host::Matrix m(3, 3);
  for (std::size_t i = 0; i < bits.size(); ++i) m.data[i] = from_bits(bits[i]);
  const std::string path = temp_path("roundtrip.npy");
  host::write_npy(path, m);
  const host::Matrix back = host::read_npy_matrix(path);
  ASSERT_EQ(back.rows, 3u);
  ASSERT_EQ(back.cols, 3u);
  for (std::size_t i = 0; i < bits.size(); ++i) EXPECT_EQ(to_bits(back.data[i]), bits[i]) << i;
  std::remove(path.c_str());
}

TEST(Npy, EmptyMatrixRoundTrips) {
  const std::string path = temp_path("empty.npy");
  host::write_npy(path, host::Matrix(0, 5));
  const host::Matrix back = host::read_npy_matrix(path);
  EXPECT_EQ(back.rows, 0u);
  EXPECT_EQ(back.cols, 5u);
  std::remove(path.c_str());
}

TEST(Npy, ReadsVersion2Float64RoundingToFloat32) {
  // 0.1 rounds to 0x3DCCCCCD; 1e300 overflows to +Inf; FLT_MAX + a quarter ulp rounds back to FLT_MAX; -0 stays.
  std::vector<std::uint8_t> data;
  for (double d : {0.1, 1e300, -1e300, 0x1.fffffe8p127, -0.0, 3.0}) {
    std::uint64_t u;
    std::memcpy(&u, &d, 8);
    const auto b = le_bytes(u, 8);
    data.insert(data.end(), b.begin(), b.end());
  }
  const auto file = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}\n", data, 2, 0);
  const auto arr = host::parse_npy(file.data(), file.size(), "v2.npy");
  EXPECT_EQ(arr.descr, "<f8");
  EXPECT_EQ(arr.value(0), 0.1);
  const host::Matrix m = host::to_matrix(arr, "v2.npy");
  const std::vector<std::uint32_t> want = {0x3DCCCCCD, 0x7F800000, 0xFF800000, 0x7F7FFFFF, 0x80000000, 0x40400000};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(to_bits(m.data[i]), want[i]) << i;
}

TEST(Npy, ReadsFloat16Exactly) {
  // 1.0, +Inf, the smallest subnormal 2^-24, -2.0.
  std::vector<std::uint8_t> data;
  for (std::uint16_t h : {0x3C00, 0x7C00, 0x0001, 0xC000}) {
    const auto b = le_bytes(h, 2);
    data.insert(data.end(), b.begin(), b.end());
  }
  const auto file = npy_file("{\"descr\": \"<f2\", \"shape\": (1, 4), \"fortran_order\": False}", data);
  const host::Matrix m = host::to_matrix(host::parse_npy(file.data(), file.size(), "h.npy"), "h.npy");
  EXPECT_EQ(m.data[0], 1.0f);
  EXPECT_EQ(to_bits(m.data[1]), 0x7F800000u);
  EXPECT_EQ(m.data[2], 0x1p-24f);
  EXPECT_EQ(m.data[3], -2.0f);
}

TEST(Npy, OneDimensionalArrayReadsButIsNotAMatrix) {
  const auto file = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4_data({0, 0, 0}));
  const auto arr = host::parse_npy(file.data(), file.size(), "vec.npy");
  EXPECT_EQ(arr.shape, (std::vector<std::size_t>{3}));
  EXPECT_EQ(arr.size(), 3u);
  try {
    host::to_matrix(arr, "vec.npy");
    FAIL() << "a 1-D array became a matrix";
  } catch (const host::NpyError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("vec.npy"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3,) is 1-D"), std::string::npos) << msg;
    EXPECT_NE(msg.find("2-D shape (rows, cols)"), std::string::npos) << msg;
  }
}

struct Malformed {
  const char* name;
  std::vector<std::uint8_t> bytes;
  const char* problem;  // a substring the message must contain
};

std::vector<Malformed> malformed_cases() {
  const auto good_data = f4_data({0, 0, 0, 0});
  auto with_header = [&](const std::string& h) { return npy_file(h, good_data); };
  std::vector<std::uint8_t> truncated_len = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 10, 0};
  std::vector<std::uint8_t> truncated_header = npy_file(kF4x2x2, {});
  truncated_header[8] = 200;  // the header length says 200 bytes, 60 follow
  auto bad_magic = npy_file(kF4x2x2, good_data);
  bad_magic[5] = 'X';
  auto non_ascii = npy_file(kF4x2x2, good_data);
  non_ascii[12] = 0xC3;
  return {
      {"empty", {}, "not a .npy file"},
      {"bad_magic", bad_magic, "not a .npy file"},
      {"version3", npy_file(kF4x2x2, good_data, 3, 0), "version 3.0 is not supported"},
      {"version1_1", npy_file(kF4x2x2, good_data, 1, 1), "version 1.1 is not supported"},
      {"truncated_length", truncated_len, "ends inside the 4-byte header length"},
      {"truncated_header", truncated_header, "truncated header"},
      {"non_ascii", non_ascii, "not printable ASCII"},
      {"not_a_dict", with_header("[1, 2]"), "dict literal starting with '{'"},
      {"unclosed_dict", with_header("{'descr': '<f4'"), "ends inside the dict"},
      {"missing_shape", with_header("{'descr': '<f4', 'fortran_order': False}"), "no 'shape' key"},
      {"unknown_key", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': 1}"),
       "unknown key 'x'"},
      {"duplicate_key", with_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}"),
       "'descr' appears twice"},
      {"bad_bool", with_header("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 2)}"), "True or False"},
      {"unquoted_descr", with_header("{'descr': f4, 'fortran_order': False, 'shape': (2, 2)}"), "quoted string"},
      {"trailing_text", with_header(kF4x2x2 + " x"), "after the closing '}'"},
      {"fortran_order", with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }"),
       "fortran_order is True"},
      {"big_endian", with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }"), "big-endian"},
      {"int32", with_header("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }"),
       "'<i4' is not supported"},
      {"complex", with_header("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 2), }"),
       "'<c8' is not supported"},
      {"shape_3d", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }"),
       "(1, 2, 2) is 3-D"},
      {"shape_0d", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (), }"), "() is 0-D"},
      {"shape_negative", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2), }"),
       "non-negative integers"},
      {"shape_not_tuple", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 2], }"),
       "tuple such as (3, 4)"},
      {"shape_overflow",
       with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 1), }"),
       "overflows"},
      {"shape_too_large",
       with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
       "too large"},
      {"data_short", npy_file(kF4x2x2, f4_data({0, 0, 0})), "data is 12 bytes but shape (2, 2) of '<f4' needs 16"},
      {"data_long", npy_file(kF4x2x2, f4_data({0, 0, 0, 0, 0})), "data is 20 bytes"},
  };
}

TEST(Npy, EveryMalformedInputNamesFileAndProblem) {
  for (const auto& c : malformed_cases()) {
    SCOPED_TRACE(c.name);
    const std::string path = temp_path(std::string(c.name) + ".npy");
    write_file(path, c.bytes);
    try {
      host::read_npy_matrix(path);
      ADD_FAILURE() << "accepted";
    } catch (const host::NpyError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(c.problem), std::string::npos) << msg;
    }
    std::remove(path.c_str());
  }
}

TEST(Npy, MissingFileAndUnwritablePath) {
  const std::string missing = temp_path("does_not_exist.npy");
  try {
    host::read_npy(missing);
    FAIL();
  } catch (const host::NpyError& e) {
    EXPECT_EQ(std::string(e.what()), missing + ": cannot open: No such file or directory");
  }
  const std::string bad_dir = temp_path("no_such_dir/out.npy");
  EXPECT_THROW(host::write_npy(bad_dir, host::Matrix(1, 1)), host::NpyError);
  host::Matrix inconsistent(2, 2);
  inconsistent.data.pop_back();
  EXPECT_THROW(host::write_npy(temp_path("inconsistent.npy"), inconsistent), host::NpyError);
}

// The header is read and checked first: a shape whose data would pass the host-memory limit is refused before a
// byte of data is read (the file here is sparse: 40 GB of nothing on disk), and NpyFile gives the shape alone for
// a command's estimate.
TEST(Npy, AShapePastTheHostMemoryLimitIsRefusedFromTheHeader) {
  const std::string path = temp_path("huge.npy");
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }";
  write_file(path, npy_file(header, {}));
  const std::uint64_t data_offset = 10 + header.size();
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(data_offset + 40000000000ull)), 0);
  host::NpyFile file(path);
  const host::NpyArray& h = file.header();
  EXPECT_EQ(h.shape, (std::vector<std::size_t>{100000, 100000}));
  EXPECT_EQ(h.item_bytes, 4u);
  EXPECT_TRUE(h.data.empty());
  try {
    file.read();
    FAIL() << "read";
  } catch (const host::NpyError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": shape (100000, 100000) of '<f4' needs 40000000000 bytes of data, more "
                                            "than the 17179869184-byte host-memory limit for a .npy file");
  }
  // Within the limit, a regular file whose size disagrees with the shape is refused from its size.
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(data_offset + 8)), 0);
  const std::string small = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), }";
  write_file(path, npy_file(small, f4_data({1, 2})));
  EXPECT_THROW(host::read_npy(path), host::NpyError);
  std::remove(path.c_str());
}

// NpyFile: the header on opening, the data on read(), the same array read_npy gives, and read() only once.
TEST(Npy, NpyFileReadsTheHeaderThenTheDataOnce) {
  const std::string path = temp_path("two_steps.npy");
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  write_file(path, npy_file(header, f4_data({0x3F800000, 0x40000000, 0x40400000, 0x40800000, 0x40A00000, 0x40C00000})));
  host::NpyFile file(path);
  EXPECT_EQ(file.header().shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(file.header().descr, "<f4");
  EXPECT_TRUE(file.header().data.empty());
  const host::NpyArray whole = file.read();
  EXPECT_EQ(whole.data, host::read_npy(path).data);
  ASSERT_EQ(whole.size(), 6u);
  EXPECT_EQ(whole.value(5), 6.0);
  EXPECT_THROW(file.read(), std::logic_error);
  // The header stays: a caller may weigh the shape after reading.
  EXPECT_EQ(file.header().shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(file.header().descr, "<f4");
  EXPECT_EQ(host::matrix_shape(file.header(), path), (std::pair<std::size_t, std::size_t>{2, 3}));
  EXPECT_TRUE(file.regular());
  // A FIFO: not regular, read the same way.
  const std::string fifo = temp_path("two_steps.fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<std::uint8_t> bytes =
      npy_file(header, f4_data({0x3F800000, 0x40000000, 0x40400000, 0x40800000, 0x40A00000, 0x40C00000}));
  std::thread writer([&] { write_file(fifo, bytes); });
  {
    host::NpyFile piped(fifo);
    EXPECT_FALSE(piped.regular());
    EXPECT_EQ(piped.read().data, whole.data);
  }
  writer.join();
  // Trailing bytes in a FIFO: read() finds them at once, or check_end() after read(End::CheckLater).
  std::vector<std::uint8_t> longer = bytes;
  longer.insert(longer.end(), {1, 2, 3, 4});
  for (const auto end : {host::NpyFile::End::CheckNow, host::NpyFile::End::CheckLater}) {
    std::thread feeder([&] { write_file(fifo, longer); });
    host::NpyFile piped(fifo);
    try {
      const host::NpyArray got = piped.read(end);
      EXPECT_EQ(end, host::NpyFile::End::CheckLater);
      EXPECT_EQ(got.data, whole.data);
      piped.check_end();
      ADD_FAILURE() << "trailing bytes accepted";
    } catch (const host::NpyError& e) {
      EXPECT_EQ(std::string(e.what()), fifo + ": data is more than the 24 bytes shape (2, 3) of '<f4' needs");
    }
    feeder.join();
  }
  std::remove(fifo.c_str());
  // A header error is the constructor's; a data error is read()'s.
  write_file(path, npy_file(header, f4_data({1, 2})));
  host::NpyFile short_data(path);
  EXPECT_THROW(short_data.read(), host::NpyError);
  write_file(path, npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", f4_data({1, 2})));
  EXPECT_THROW(host::NpyFile{path}, host::NpyError);
  std::remove(path.c_str());
}

// skip(): read()'s checks without the data -- a regular file's size from its length (a sparse file past the
// host-memory limit costs nothing), a FIFO's data drained 64 KiB at a time so that its writer finishes.
TEST(Npy, NpyFileSkipChecksTheDataWithoutHoldingIt) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 50000), }";
  const std::uint64_t data_bytes = std::uint64_t{4} * 100000 * 50000;  // 20 GB, past the 16 GiB limit
  const std::string sparse = temp_path("skip_sparse.npy");
  const std::vector<std::uint8_t> header_bytes = npy_file(header, {});
  write_file(sparse, header_bytes);
  const auto resize = [&](std::uint64_t data) {
    ASSERT_EQ(::truncate(sparse.c_str(), static_cast<off_t>(header_bytes.size() + data)), 0);
  };
  resize(data_bytes);
  {
    host::NpyFile whole(sparse);
    EXPECT_NO_THROW(whole.skip());
    EXPECT_THROW(whole.skip(), std::logic_error);
    EXPECT_THROW(whole.read(), std::logic_error);
  }
  EXPECT_THROW(host::NpyFile(sparse).read(), host::NpyError);  // holding it would pass the limit
  resize(data_bytes - 1);
  try {
    host::NpyFile(sparse).skip();
    ADD_FAILURE() << "a short regular file skipped";
  } catch (const host::NpyError& e) {
    EXPECT_EQ(std::string(e.what()), sparse + ": data is 19999999999 bytes but shape (100000, 50000) of '<f4' needs "
                                              "20000000000 bytes");
  }
  std::remove(sparse.c_str());

  // A FIFO of 3 MiB of data (48 pipe buffers): drained whole, its writer done; short or long data named.
  const std::string fifo = temp_path("skip.fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string fifo_header = "{'descr': '<f2', 'fortran_order': False, 'shape': (1024, 1536), }";
  const std::vector<std::uint8_t> bytes = npy_file(fifo_header, std::vector<std::uint8_t>(2 * 1024 * 1536, 0x3C));
  for (const std::size_t cut : {std::size_t{0}, std::size_t{1}}) {
    std::vector<std::uint8_t> fed(bytes.begin(), bytes.end() - static_cast<std::ptrdiff_t>(cut));
    std::thread writer([&] { write_file(fifo, fed); });
    host::NpyFile piped(fifo);
    if (cut == 0) {
      EXPECT_NO_THROW(piped.skip());
    } else {
      try {
        piped.skip();
        ADD_FAILURE() << "short FIFO data skipped";
      } catch (const host::NpyError& e) {
        EXPECT_EQ(std::string(e.what()), fifo + ": data is 3145727 bytes but shape (1024, 1536) of '<f2' needs "
                                                "3145728 bytes");
      }
    }
    writer.join();
  }
  std::vector<std::uint8_t> longer = bytes;
  longer.push_back(0);
  std::thread feeder([&] { write_file(fifo, longer); });
  {
    host::NpyFile piped(fifo);
    piped.skip(host::NpyFile::End::CheckLater);
    EXPECT_THROW(piped.check_end(), host::NpyError);
  }
  feeder.join();
  std::remove(fifo.c_str());
}

// Every part of a header a message quotes is cut to 160 characters: the whole header, a key, the descr.
TEST(Npy, LongHeaderPartsAreCutInMessages) {
  const std::string long_descr = "{'descr': '" + std::string(20000, 'x') + "', 'fortran_order': False, 'shape': (2, 2), }";
  const std::string long_key = "{'" + std::string(5000, 'k') + "': 1}";
  const std::string long_key_no_colon = "{'" + std::string(5000, 'k') + "' 1}";
  const std::string twice = "{'descr': '<f4', 'descr': '<f4'" + std::string(5000, ' ') + "}";
  for (const std::string& header : {long_descr, long_key, long_key_no_colon, twice}) {
    const auto bytes = npy_file(header, f4_data({0, 0, 0, 0}));
    try {
      host::parse_npy(bytes.data(), bytes.size(), "long.npy");
      ADD_FAILURE() << "accepted";
    } catch (const host::NpyError& e) {
      const std::string msg = e.what();
      EXPECT_LT(msg.size(), 600u) << msg.substr(0, 300);
      EXPECT_NE(msg.find("characters)"), std::string::npos) << msg.substr(0, 300);
    }
  }
}

}  // namespace
