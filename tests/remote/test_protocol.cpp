// The MMIO protocol's pieces on their own (pevp/remote): payloads, frames, endpoints, and framed connections over
// a socket pair -- split frames, stalls, closes mid-frame -- against hand-written byte sequences.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "pevp/remote/credential.h"
#include "pevp/remote/owned_file.h"
#include "pevp/remote/protocol.h"
#include "pevp/remote/socket.h"

namespace pevp::remote {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(Payload, FieldsAreLittleEndianAndReadBack) {
  Writer w;
  w.u8(0xAB).u16(0x1234).u32(0xDEADBEEF).u64(0x0102030405060708ull).str("top").lstr("src");
  const std::vector<std::uint8_t> expected = {0xAB, 0x34, 0x12, 0xEF, 0xBE, 0xAD, 0xDE, 8,   7,   6,   5,   4,
                                              3,    2,    1,    3,    0,    't',  'o',  'p', 3,   0,   0,   0,
                                              's',  'r',  'c'};
  EXPECT_EQ(w.data(), expected);
  Reader r(w.data().data(), w.data().size(), "test");
  EXPECT_EQ(r.u8("a"), 0xAB);
  EXPECT_EQ(r.u16("b"), 0x1234);
  EXPECT_EQ(r.u32("c"), 0xDEADBEEFu);
  EXPECT_EQ(r.u64("d"), 0x0102030405060708ull);
  EXPECT_EQ(r.str("e"), "top");
  EXPECT_EQ(r.lstr("f"), "src");
  EXPECT_NO_THROW(r.end());
}

TEST(Payload, EveryMalformedPayloadNamesItsOpAndField) {
  const std::vector<std::uint8_t> three = {1, 2, 3};
  Reader short_read(three.data(), three.size(), "read32");
  EXPECT_EQ(message_of([&] { short_read.u64("address"); }),
            "read32: the payload ends inside 'address' (8 bytes needed, 3 left)");
  const std::vector<std::uint8_t> flag = {2};
  Reader bad_flag(flag.data(), flag.size(), "arm");
  EXPECT_EQ(message_of([&] { bad_flag.flag("serialized"); }), "arm: 'serialized' is 2, a flag is 0 or 1");
  const std::vector<std::uint8_t> long_str = {10, 0, 'a'};
  Reader bad_str(long_str.data(), long_str.size(), "read_reg");
  EXPECT_EQ(message_of([&] { bad_str.str("face"); }),
            "read_reg: the payload ends inside 'face' (10 bytes needed, 1 left)");
  Reader extra(three.data(), three.size(), "time");
  EXPECT_EQ(message_of([&] { extra.end(); }), "time: 3 byte(s) after the last field of the payload");
  const std::vector<std::uint8_t> nul = {4, 0, 'a', 'b', 0, 'c'};
  Reader with_nul(nul.data(), nul.size(), "read_reg");
  EXPECT_EQ(message_of([&] { with_nul.str("name"); }),
            "read_reg: 'name' holds a NUL byte at offset 2 (a str is text without NULs)");
  EXPECT_THROW(Writer().str(std::string(70000, 'x')), ProtocolError);
}

TEST(Frames, HeaderLimitsAndVersion) {
  const std::vector<std::uint8_t> f = encode_frame(0x02, {9, 8});
  EXPECT_EQ(f, (std::vector<std::uint8_t>{4, 0, 0, 0, kProtocolVersion, 0x02, 9, 8}));
  const std::uint8_t ok[4] = {4, 0, 0, 0}, one[4] = {1, 0, 0, 0}, huge[4] = {0xFF, 0xFF, 0xFF, 0x7F};
  EXPECT_EQ(frame_length(ok), 4u);
  EXPECT_EQ(message_of([&] { frame_length(one); }), "frame length 1: a frame has at least its version and kind");
  EXPECT_NE(message_of([&] { frame_length(huge); }).find("exceeds the limit of"), std::string::npos);
  const std::uint8_t max_ok[4] = {
      static_cast<std::uint8_t>(kMaxFrameBytes), static_cast<std::uint8_t>(kMaxFrameBytes >> 8),
      static_cast<std::uint8_t>(kMaxFrameBytes >> 16), static_cast<std::uint8_t>(kMaxFrameBytes >> 24)};
  EXPECT_EQ(frame_length(max_ok), kMaxFrameBytes);
  const std::uint8_t v9[2] = {9, 0x02};
  EXPECT_EQ(message_of([&] { decode_frame_body(v9, 2); }), "protocol version 9: this side speaks version 1");
  const Frame decoded = decode_frame_body(f.data() + 4, f.size() - 4);
  EXPECT_EQ(decoded.kind, 0x02);
  EXPECT_EQ(decoded.payload, (std::vector<std::uint8_t>{9, 8}));
}

TEST(Ops, EveryByteIsAnOpOrNot) {
  unsigned ops = 0;
  for (unsigned b = 0; b < 256; ++b)
    if (const auto op = op_from_byte(static_cast<std::uint8_t>(b))) {
      ++ops;
      EXPECT_EQ(static_cast<unsigned>(*op), b);
      EXPECT_STRNE(name(*op), "?");
    }
  EXPECT_EQ(ops, 27u);  // the ops docs/protocol.md lists
  EXPECT_FALSE(op_from_byte(0x80));  // a reply kind is no request
}

TEST(Endpoints, ParsedOrRefusedWithTheReason) {
  EXPECT_EQ(parse_endpoint("unix:/tmp/a.sock").describe(), "unix:/tmp/a.sock");
  EXPECT_EQ(parse_endpoint("tcp:4242").describe(), "tcp:127.0.0.1:4242");
  EXPECT_EQ(parse_endpoint("tcp:localhost:0").port, 0);
  EXPECT_TRUE(parse_endpoint("tcp:127.0.0.2:1").loopback());
  EXPECT_FALSE(parse_endpoint("tcp:0.0.0.0:1").loopback());
  EXPECT_NE(message_of([] { parse_endpoint("tcp:65536"); }).find("0..65535"), std::string::npos);
  EXPECT_NE(message_of([] { parse_endpoint("tcp:-1"); }).find("0..65535"), std::string::npos);
  EXPECT_NE(message_of([] { parse_endpoint("tcp:example.com:80"); }).find("IPv4"), std::string::npos);
  EXPECT_NE(message_of([] { parse_endpoint("unix:"); }).find("socket path"), std::string::npos);
  EXPECT_NE(message_of([] { parse_endpoint("unix:" + std::string(200, 'a')); }).find("socket path"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_endpoint("http://x"); }).find("unix:PATH"), std::string::npos);
}

struct Pair {
  Connection a{-1}, b{-1};
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    a = Connection(fds[0]);
    b = Connection(fds[1]);
  }
};

TEST(Connections, AFrameSplitIntoSingleBytesArrivesWhole) {
  Pair p;
  const std::vector<std::uint8_t> bytes = encode_frame(0x10, Writer().u64(0x3000000).u8(1).take());
  std::thread writer([&] {
    for (std::uint8_t b : bytes) {
      ASSERT_EQ(::write(p.b.fd(), &b, 1), 1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  const std::optional<Frame> f = p.a.receive(Millis(5000));
  writer.join();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind, 0x10);
  EXPECT_EQ(f->payload.size(), 9u);
}

TEST(Connections, StallsClosesAndEndsOfStream) {
  {
    Pair p;
    const std::vector<std::uint8_t> bytes = encode_frame(0x02, {});
    ASSERT_EQ(::write(p.b.fd(), bytes.data(), 3), 3);  // three bytes of the length, then nothing
    EXPECT_NE(message_of([&] { p.a.receive(Millis(100)); }).find("stalled"), std::string::npos);
  }
  {
    Pair p;
    const std::vector<std::uint8_t> bytes = encode_frame(0x13, std::vector<std::uint8_t>(100, 7));
    ASSERT_EQ(::write(p.b.fd(), bytes.data(), 50), 50);
    p.b = Connection(-1);  // the peer goes mid-frame
    EXPECT_NE(message_of([&] { p.a.receive(Millis(1000)); }).find("closed the connection"), std::string::npos);
  }
  {
    Pair p;
    p.b = Connection(-1);  // closed between frames: the end of the stream, not an error
    EXPECT_FALSE(p.a.receive(Millis(1000)));
  }
  {
    Pair p;
    const std::uint8_t oversized[6] = {0xFF, 0xFF, 0xFF, 0xFF, 1, 0x13};
    ASSERT_EQ(::write(p.b.fd(), oversized, sizeof oversized), 6);
    EXPECT_THROW(p.a.receive(Millis(1000)), ProtocolError);
  }
  {
    Pair p;  // nothing arrives: the first-byte wait is the caller's to bound
    EXPECT_NE(message_of([&] { p.a.receive(Millis(1000), Millis(50)); }).find("no frame began"), std::string::npos);
  }
}

TEST(Connections, ASendToAPeerThatTakesNothingTimesOut) {
  Pair p;
  const std::vector<std::uint8_t> big(8u << 20, 1);  // more than the socket buffers hold
  EXPECT_NE(message_of([&] { p.a.send(0x13, big, Millis(100)); }).find("took no more data"), std::string::npos);
}

TEST(ErrorText, WhatIsNotPrintableUtf8IsEscaped) {
  // Printable UTF-8 of one to four bytes passes; a line feed too (it separates the assembler's diagnostics).
  EXPECT_EQ(printable_message("reg 'a.b' \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\nline 2"),
            "reg 'a.b' \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\nline 2");
  // Controls, DEL, a NUL (the message goes on past it) and the C1 controls, byte by byte.
  EXPECT_EQ(printable_message(std::string("a\x1b[31m\x00z\t\x7f\xc2\x9b\xc2\xa0", 14)),
            "a\\x1b[31m\\x00z\\x09\\x7f\\xc2\\x9b\xc2\xa0");
  // Invalid UTF-8: a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, bytes never used,
  // a sequence cut by another lead byte or by the end.
  EXPECT_EQ(printable_message("\x80|\xc0\xaf|\xe0\x80\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xff\xfe|\xe2\x82x|\xe2"),
            "\\x80|\\xc0\\xaf|\\xe0\\x80\\xaf|\\xed\\xa0\\x80|\\xf4\\x90\\x80\\x80|\\xff\\xfe|\\xe2\\x82x|\\xe2");
  // A backslash is doubled, so that a client cannot forge an escape.
  EXPECT_EQ(printable_message("a\\x41"), "a\\\\x41");
}

TEST(ErrorText, AnErrorPayloadIsPrintableAndCutAtACharacter) {
  const std::vector<std::uint8_t> p = error_payload(Status::Argument, std::string("name '\xff\x00'", 9));
  Reader r(p.data(), p.size(), "error");
  EXPECT_EQ(r.u8("status"), 1);
  EXPECT_EQ(r.str("message"), "name '\\xff\\x00'");
  // 65,534 ASCII bytes then a 2-byte character: the cut falls inside it and keeps it out whole.
  const std::string longest = std::string(0xFFFE, 'a') + "\xc3\xa9";
  const std::vector<std::uint8_t> cut = error_payload(Status::Argument, longest);
  Reader rc(cut.data(), cut.size(), "error");
  rc.u8("status");
  EXPECT_EQ(rc.str("message"), std::string(0xFFFE, 'a'));
}

TEST(Credential, TokensAreFreshHexAndComparedWhole) {
  const std::string a = new_token(), b = new_token();
  EXPECT_EQ(a.size(), 2 * kTokenRandomBytes);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
  EXPECT_TRUE(token_matches(a, a));
  std::string first = a, last = a;
  first.front() = first.front() == '0' ? '1' : '0';
  last.back() = last.back() == '0' ? '1' : '0';
  EXPECT_FALSE(token_matches(a, first));
  EXPECT_FALSE(token_matches(a, last));
  EXPECT_FALSE(token_matches(a, a.substr(0, a.size() - 1)));
  EXPECT_FALSE(token_matches(a, a + "0"));
  EXPECT_FALSE(token_matches(a, ""));
}

TEST(Credential, AnAuthPayloadIsAStrAndNothingElse) {
  std::string why;
  EXPECT_EQ(token_of_auth_payload(auth_payload("t0k"), &why), "t0k");
  EXPECT_EQ(token_of_auth_payload(auth_payload(""), &why), "");
  EXPECT_EQ(token_of_auth_payload({5}, &why), std::nullopt);
  EXPECT_EQ(why, "auth: the payload ends inside 'token' (2 bytes needed, 1 there)");
  EXPECT_EQ(token_of_auth_payload({3, 0, 'a'}, &why), std::nullopt);
  EXPECT_EQ(why, "auth: the payload ends inside 'token' (5 bytes needed, 3 there)");
  EXPECT_EQ(token_of_auth_payload({1, 0, 'a', 'b'}, &why), std::nullopt);
  EXPECT_EQ(why, "auth: 1 byte(s) after the last field of the payload");
}

struct TempFolder {
  std::string path;
  TempFolder() {
    char name[] = "/tmp/pevp-remote-test.XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempFolder() { std::system(("rm -rf '" + path + "'").c_str()); }
};

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

TEST(Credential, TheTokenFileIsOwnerOnlyReadBackAndRemovedOnlyWhileItIsOurs) {
  TempFolder d;
  const std::string path = d.path + "/token";
  std::ofstream(path) << "a file another process left\n";
  ::chmod(path.c_str(), 0644);
  {
    OwnedFile file = write_token_file(path, "abc123");
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(read_token_file(path), "abc123");
    EXPECT_EQ(file.path(), path);
  }
  EXPECT_FALSE(exists(path)) << "removed with its OwnedFile";
  OwnedFile first = write_token_file(path, "first");
  OwnedFile second = write_token_file(path, "second");  // replaces the first's file at the same path
  EXPECT_FALSE(first.remove()) << "the path names another file now";
  EXPECT_EQ(read_token_file(path), "second");
  EXPECT_TRUE(second.remove());
  EXPECT_FALSE(exists(path));
  EXPECT_NE(message_of([&] { write_token_file(d.path + "/no/such/folder/t", "x"); }).find("no/such/folder"),
            std::string::npos);
}

TEST(Credential, ABadTokenFileIsNamedWithWhatIsWrong) {
  TempFolder d;
  EXPECT_NE(message_of([&] { read_token_file(d.path + "/missing"); }).find("token file " + d.path + "/missing: No such"),
            std::string::npos);
  EXPECT_NE(message_of([&] { read_token_file(d.path); }).find("not a regular file"), std::string::npos);
  std::ofstream(d.path + "/blank") << " \n\t\n";
  EXPECT_NE(message_of([&] { read_token_file(d.path + "/blank"); }).find("empty"), std::string::npos);
  std::ofstream(d.path + "/huge") << std::string(kMaxTokenFileBytes + 1, 'a');
  EXPECT_NE(message_of([&] { read_token_file(d.path + "/huge"); }).find("longer than"), std::string::npos);
  std::ofstream(d.path + "/padded") << "\n  tok3n \r\n";
  EXPECT_EQ(read_token_file(d.path + "/padded"), "tok3n");
}

TEST(Credential, WhichTokenFileAClientPresents) {
  TempFolder home;
  ::setenv("HOME", home.path.c_str(), 1);
  ::unsetenv(kTokenFileVariable);
  const Endpoint tcp = parse_endpoint("tcp:localhost:4242"), unix_socket = parse_endpoint("unix:/tmp/s");
  const std::string fallback = home.path + "/.pe-vp/tcp-127.0.0.1-4242.token";
  EXPECT_EQ(default_token_path(tcp), fallback);
  EXPECT_EQ(client_token_file(tcp, ""), std::nullopt) << "no default file yet";
  OwnedFile made = write_token_file(fallback, "t");
  struct stat st {};
  ASSERT_EQ(::stat((home.path + "/.pe-vp").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(client_token_file(tcp, ""), fallback);
  ::setenv(kTokenFileVariable, "/from/the/environment", 1);
  EXPECT_EQ(client_token_file(tcp, ""), "/from/the/environment");
  EXPECT_EQ(client_token_file(tcp, "/given"), "/given");
  EXPECT_EQ(client_token_file(unix_socket, "/given"), std::nullopt) << "a Unix socket takes no token";
  ::unsetenv(kTokenFileVariable);
}

TEST(Connections, ClosingAtOnceKeepsTheLastFrameAndDoesNotWait) {
  Pair p;
  const std::uint8_t unread[3] = {1, 2, 3};  // the peer's bytes this side never reads
  ASSERT_EQ(::write(p.b.fd(), unread, sizeof unread), 3);
  p.a.send(static_cast<std::uint8_t>(Reply::Error), error_payload(Status::State, "busy"), Millis(0));
  const auto start = std::chrono::steady_clock::now();
  p.a.close_at_once_after_last_frame();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
  EXPECT_EQ(p.a.fd(), -1);
  const std::optional<Frame> last = p.b.receive(Millis(1000));
  ASSERT_TRUE(last);
  EXPECT_EQ(last->kind, static_cast<std::uint8_t>(Reply::Error));
  EXPECT_FALSE(p.b.receive(Millis(1000))) << "then the end of the stream";
}

}  // namespace
}  // namespace pevp::remote
