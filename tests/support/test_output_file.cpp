// files::write_file against what each kind of target must become: a regular
// file replaced whole (its mode kept), a symlink followed and left in place, a
// FIFO and a character device written in place, and every failure reported
// with the path and the system's reason.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pevp/files/input_file.h"
#include "pevp/files/output_file.h"

namespace {

namespace fs = std::filesystem;
using pevp::files::check_output;
using pevp::files::read_file;
using pevp::files::same_file_twice;
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

// /dev/fd/N, /proc/self/fd/N, /dev/stdout: the descriptor is written where it stands -- a file opened for
// appending keeps what it held and is not replaced, a pipe gets the bytes.
TEST_F(OutputFile, ADescriptorNameIsWrittenAtItsPositionNotReplaced) {
  const fs::path f = dir_ / "log.txt";
  { std::ofstream(f) << "IMPORTANT\n"; }
  struct stat before {};
  ASSERT_EQ(::stat(f.c_str(), &before), 0);
  const int fd = ::open(f.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  std::string error;
  ASSERT_TRUE(put("/dev/fd/" + std::to_string(fd), "one\n", &error)) << error;
  ASSERT_TRUE(put("/proc/self/fd/" + std::to_string(fd), "two\n", &error)) << error;
  const fs::path link = dir_ / "to_fd";  // through a symlink as well
  fs::create_symlink("/dev/fd/" + std::to_string(fd), link);
  ASSERT_TRUE(put(link, "three\n", &error)) << error;
  EXPECT_GE(::fcntl(fd, F_GETFD), 0) << "the descriptor stays open";
  ::close(fd);
  EXPECT_EQ(read(f), "IMPORTANT\none\ntwo\nthree\n");
  struct stat after {};
  ASSERT_EQ(::stat(f.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "the file was replaced";
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find("partial"), std::string::npos) << e.path();

  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_TRUE(put("/proc/self/fd/" + std::to_string(p[1]), "piped", &error)) << error;
  ::close(p[1]);
  char buf[16] = {};
  EXPECT_EQ(::read(p[0], buf, sizeof buf), 5);
  EXPECT_EQ(std::string(buf), "piped");
  ::close(p[0]);

  EXPECT_FALSE(put("/dev/fd/987654", "x", &error));
  EXPECT_EQ(error, "/dev/fd/987654: descriptor 987654 is not open");
}

// The temporary file is created under a unique name, exclusively: a symlink planted at the old fixed name
// (<target>.partial) is neither followed nor removed, and nothing is left behind on success or failure.
TEST_F(OutputFile, APlantedSymlinkAtTheTemporaryNameIsNotFollowed) {
  const fs::path victim = dir_ / "victim", target = dir_ / "t1.npy";
  { std::ofstream(victim) << "VICTIM"; }
  fs::create_symlink(victim, dir_ / "t1.npy.partial");
  std::string error;
  ASSERT_TRUE(put(target, "data", &error)) << error;
  EXPECT_EQ(read(victim), "VICTIM");
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(target)));
  EXPECT_EQ(read(target), "data");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "t1.npy.partial")));
  // A new file gets the mode a plain create would give it, not mkstemp's 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(static_cast<mode_t>(fs::status(target).permissions()), 0666 & ~mask);
  // An emitter that throws leaves no temporary.
  EXPECT_THROW(write_file(target.string(), [](std::ostream&) { throw std::runtime_error("emit"); }, &error),
               std::runtime_error);
  EXPECT_EQ(read(target), "data");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 3u) << "victim, t1.npy, the planted link: no temporary left";
}

TEST_F(OutputFile, ConcurrentWritersOfOneFileDoNotCollide) {
  const fs::path target = dir_ / "shared.json";
  std::vector<std::thread> writers;
  std::vector<std::string> errors(4);
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 25; ++i)
        if (!put(target, std::string(100000, static_cast<char>('a' + w)), &errors[w])) return;
      errors[w].clear();
    });
  for (std::thread& t : writers) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  const std::string last = read(target);
  ASSERT_EQ(last.size(), 100000u);
  EXPECT_EQ(last.find_first_not_of(last[0]), std::string::npos) << "one writer's whole content";
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1u) << "no temporary left";
}

// A file nobody may write is refused, not replaced by the rename; check_output says so before any write.
TEST_F(OutputFile, AReadOnlyFileIsRefusedAndKept) {
  const fs::path f = dir_ / "ro.json";
  { std::ofstream(f) << "KEEP"; }
  fs::permissions(f, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  std::string error;
  EXPECT_FALSE(put(f, "new", &error));
  EXPECT_EQ(error, f.string() + ": the file is read-only");
  EXPECT_EQ(read(f), "KEEP");
  EXPECT_EQ(check_output(f.string()), f.string() + ": the file is read-only");
  const fs::path link = dir_ / "ro_link";  // the file a link names decides
  fs::create_symlink(f, link);
  EXPECT_EQ(check_output(link.string()), link.string() + ": the file is read-only");
  EXPECT_EQ(check_output("/dev/null"), "") << "a device is written in place whatever its mode";
  EXPECT_EQ(check_output(dir_.string()), dir_.string() + ": is a directory");
  EXPECT_EQ(check_output((dir_ / "no" / "x").string()),
            (dir_ / "no" / "x").string() + ": no such directory '" + (dir_ / "no").string() + "'");
  EXPECT_EQ(check_output((dir_ / "fresh").string()), "");
  EXPECT_EQ(check_output(""), "(empty path): no output file given");
}

// One file named twice, however spelled: a relative name of a file not there yet against ./ and absolute
// spellings of it, and two hard links of one file.
TEST_F(OutputFile, TwoSpellingsOfOneFileAreTheSameFile) {
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  EXPECT_NE(same_file_twice({{"--out", "fresh1"}, {"--stats-json", "./fresh1"}}), "");
  EXPECT_NE(same_file_twice({{"--out", "f2"}, {"--stats-json", (dir_ / "f2").string()}}), "");
  EXPECT_NE(same_file_twice({{"--out", "sub/../f3"}, {"--trace", "f3"}}), "");
  { std::ofstream("hl1") << "x"; }
  fs::create_hard_link("hl1", "hl2");
  EXPECT_EQ(same_file_twice({{"--trace", "hl1"}, {"--vcd", "hl2"}}),
            "--trace and --vcd both name 'hl2' (as 'hl1'): give each output its own file");
  EXPECT_EQ(same_file_twice({{"--out", "a"}, {"--trace", "b"}, {"--vcd", "/dev/stdout"}, {"--stats-json", "/dev/stdout"}}),
            "")
      << "distinct files, and a descriptor named twice (written in place, nothing replaced)";
  fs::current_path(cwd);
}

// Every input stops at its kind's limit: a regular file from its size (a sparse one costs nothing), a device or
// FIFO once the limit is passed.
TEST(InputFile, AFileLargerThanItsKindsLimitIsRefused) {
  constexpr pevp::files::InputKind kSmall{"a test input", 100};
  std::string error;
  EXPECT_FALSE(read_file("/dev/zero", &error, kSmall));
  EXPECT_EQ(error, "/dev/zero: larger than the 100-byte limit for a test input");
  const fs::path f = fs::temp_directory_path() / ("pevp_input_" + std::to_string(::getpid()));
  { std::ofstream(f) << std::string(100, 'x'); }
  const auto at_limit = read_file(f.string(), &error, kSmall);
  ASSERT_TRUE(at_limit) << error;
  EXPECT_EQ(at_limit->size(), 100u);
  fs::resize_file(f, std::uint64_t{40} << 30);  // sparse: 40 GiB of nothing
  EXPECT_FALSE(read_file(f.string(), &error));
  EXPECT_EQ(error, f.string() + ": larger than the 268435456-byte limit for a program, script or configuration file");
  fs::remove(f);
  EXPECT_FALSE(read_file(fs::temp_directory_path().string(), &error));
  EXPECT_EQ(error, fs::temp_directory_path().string() + ": is a directory");
}

// discard(): reads and drops up to the count asked, 64 KiB at a time, stopping at the end -- a FIFO's writer that sends
// more than a pipe holds finishes.
TEST(InputFile, DiscardDropsUpToTheCountAndStopsAtTheEnd) {
  const fs::path fifo = fs::temp_directory_path() / ("pevp_discard_" + std::to_string(::getpid()));
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string sent(1000000, 'x');
  std::thread writer([&] { std::ofstream(fifo) << sent; });
  {
    pevp::files::InputFile in;
    std::string error;
    std::uint64_t dropped = 0;
    EXPECT_TRUE(in.open(fifo.string(), &error)) << error;
    EXPECT_TRUE(in.discard(999999, &dropped, &error)) << error;
    EXPECT_EQ(dropped, 999999u);
    EXPECT_TRUE(in.discard(10, &dropped, &error)) << error;
    EXPECT_EQ(dropped, 1u) << "the end of the data";
  }
  // Whatever failed above, the writer is let go: a reader end opened and closed ends its wait or its write.
  if (const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK); fd >= 0) ::close(fd);
  writer.join();
  fs::remove(fifo);
}

// pipe_named_twice(): one FIFO under two names (itself, a symlink), and an open pipe's /dev/fd/N twice; regular
// files, missing paths and empty names are not pipes.
TEST(InputFile, OnePipeNamedTwiceIsFound) {
  using pevp::files::pipe_named_twice;
  const fs::path dir = fs::temp_directory_path() / ("pevp_pipes_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string p = (dir / "p").string(), q = (dir / "q").string(), link = (dir / "link").string();
  const std::string file = (dir / "f").string();
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(q.c_str(), 0600), 0);
  fs::create_symlink(p, link);
  { std::ofstream(file) << "x"; }
  EXPECT_EQ(pipe_named_twice({{"--a", p}, {"--b", q}}), "");
  EXPECT_EQ(pipe_named_twice({{"--a", link}, {"--b", q}, {"--load", p}}),
            "--a " + link + " and --load " + p +
                " name the same pipe, which can be read only once: give each input its own file or pipe");
  EXPECT_EQ(pipe_named_twice({{"--a", file}, {"--b", file}, {"--config", ""}, {"--regs", ""},
                              {"--load", (dir / "missing").string()}, {"--load", (dir / "missing").string()}}),
            "")
      << "a regular file may be read twice; a missing one is reported when it is opened";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string fd = "/dev/fd/" + std::to_string(fds[0]);
  EXPECT_EQ(pipe_named_twice({{"--a", fd}, {"--b", fd}}),
            "--a " + fd + " and --b " + fd +
                " name the same pipe, which can be read only once: give each input its own file or pipe");
  ::close(fds[0]);
  ::close(fds[1]);
  fs::remove_all(dir);
}

}  // namespace
