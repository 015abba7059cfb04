// The MMIO protocol's pieces on their own (pevp/remote): payloads, frames, endpoints, and framed connections over
// a socket pair -- split frames, stalls, closes mid-frame -- against hand-written byte sequences.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

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
  EXPECT_EQ(ops, 24u);  // the ops docs/protocol.md lists
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

}  // namespace
}  // namespace pevp::remote
