// files::write_file against what each kind of target must become: a regular
// file replaced whole (its mode kept), a symlink followed and left in place, a
// FIFO and a character device written in place, and every failure reported
// with the path and the system's reason.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "pevp/files/output_file.h"

namespace {

namespace fs = std::filesystem;
using pevp::files::write_file;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pevp_files_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static bool put(const fs::path& p, const std::string& text, std::string* error) {
    return write_file(p.string(), [&](std::ostream& o) { o << text; }, error);
  }
  fs::path dir_;
};

TEST_F(OutputFile, ANewFileIsCreatedAndAnExistingOneReplacedKeepingItsMode) {
  const fs::path f = dir_ / "out.json";
  std::string error;
  ASSERT_TRUE(put(f, "first", &error)) << error;
  EXPECT_EQ(read(f), "first");
  fs::permissions(f, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ASSERT_TRUE(put(f, "second, longer", &error)) << error;
  EXPECT_EQ(read(f), "second, longer");
  EXPECT_EQ(fs::status(f).permissions(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_FALSE(fs::exists(dir_ / "out.json.partial")) << "no temporary left behind";
}

TEST_F(OutputFile, ASymlinkIsFollowedAndStaysALink) {
  const fs::path target = dir_ / "real.txt", link = dir_ / "link.txt";
  { std::ofstream(target) << "old"; }
  fs::create_symlink("real.txt", link);  // relative: resolved against the link's folder
  std::string error;
  ASSERT_TRUE(put(link, "new", &error)) << error;
  ASSERT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(fs::read_symlink(link), "real.txt");
  EXPECT_EQ(read(target), "new");
}

TEST_F(OutputFile, ADanglingSymlinkCreatesItsTarget) {
  const fs::path link = dir_ / "dangling";
  fs::create_symlink(dir_ / "made.txt", link);
  std::string error;
  ASSERT_TRUE(put(link, "made", &error)) << error;
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read(dir_ / "made.txt"), "made");
}

TEST_F(OutputFile, ASymlinkLoopIsAnError) {
  fs::create_symlink(dir_ / "b", dir_ / "a");
  fs::create_symlink(dir_ / "a", dir_ / "b");
  std::string error;
  EXPECT_FALSE(put(dir_ / "a", "x", &error));
  EXPECT_NE(error.find("too many levels of symbolic links"), std::string::npos) << error;
}

TEST_F(OutputFile, AFifoIsWrittenInPlace) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read(fifo); });  // opening blocks until the writer opens
  std::string error;
  const bool ok = put(fifo, "through the pipe", &error);
  reader.join();
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fs::status(fifo))) << "the FIFO must not become a regular file";
}

TEST_F(OutputFile, ACharacterDeviceIsWrittenInPlace) {
  std::string error;
  ASSERT_TRUE(put("/dev/null", "discarded", &error)) << error;
  EXPECT_TRUE(fs::is_character_file(fs::status("/dev/null")));
  const fs::path link = dir_ / "to_null";  // the same through a symlink
  fs::create_symlink("/dev/null", link);
  ASSERT_TRUE(put(link, "discarded", &error)) << error;
  EXPECT_TRUE(fs::is_character_file(fs::status("/dev/null")));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
}

TEST_F(OutputFile, AFullDeviceReportsTheWriteError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  std::string error;
  // More than any stream buffer, so the failure shows while writing as well as on the flush.
  EXPECT_FALSE(put("/dev/full", std::string(1 << 20, 'x'), &error));
  EXPECT_NE(error.find("/dev/full: write error"), std::string::npos) << error;
  EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
  EXPECT_FALSE(put("/dev/full", "x", &error)) << "a one-byte write fails at the flush";
}

TEST_F(OutputFile, ADirectoryOrAMissingFolderIsAnErrorNamingThePath) {
  std::string error;
  EXPECT_FALSE(put(dir_, "x", &error));
  EXPECT_EQ(error, dir_.string() + ": is a directory");
  const fs::path missing = dir_ / "no" / "such" / "out.json";
  EXPECT_FALSE(put(missing, "x", &error));
  EXPECT_EQ(error.rfind(missing.string() + ": cannot create the temporary file", 0), 0u) << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
  EXPECT_FALSE(put("", "x", &error));
  EXPECT_EQ(error, "(empty path): no output file given");
}

TEST_F(OutputFile, BytesAreWrittenExactly) {
  const fs::path f = dir_ / "bytes.bin";
  const unsigned char bytes[] = {0x00, 0xFF, 0x0A, 0x0D, 0x1A};
  std::string error;
  ASSERT_TRUE(write_file(f.string(), bytes, sizeof bytes, &error)) << error;
  EXPECT_EQ(read(f), std::string(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

}  // namespace
