// Every class of bad checkpoint is rejected with its precise message, and the target is left exactly as it was:
// its SBUF and PSUM bytes, its registers, its simulated time and its whole state as a new checkpoint of it shows.
// The target has run program A (where the checkpoint was taken) and then B, so its state differs from the
// checkpoint's everywhere a half-load would show. The sections are found by an independent reading of the format
// (docs/checkpoint.md), with this file's own CRC-32.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "ckpt_scenario.h"

namespace {

using namespace ckt;
using Bytes = std::vector<std::uint8_t>;

constexpr Generation kGen = Generation::MARIANA;

std::uint32_t crc32(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::uint64_t le(const Bytes& b, std::size_t at, unsigned n) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= std::uint64_t{b[at + i]} << (8 * i);
  return v;
}
void put_le(Bytes& b, std::size_t at, std::uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// Where each section is: its header, its payload and its length (docs/checkpoint.md "Format").
struct Section {
  std::string name;
  std::size_t header = 0, payload = 0, length = 0;
};
struct Layout {
  std::size_t header_end = 0;  // magic, version, generation
  std::vector<Section> sections;
};
Layout layout_of(const Bytes& b) {
  Layout l;
  const std::size_t gen_len = le(b, 12, 4);
  l.header_end = 16 + gen_len;
  std::size_t at = l.header_end;
  while (at < b.size()) {
    Section s;
    s.header = at;
    const std::size_t name_len = le(b, at, 2);
    s.name.assign(b.begin() + at + 2, b.begin() + at + 2 + name_len);
    s.length = le(b, at + 2 + name_len, 8);
    s.payload = at + 2 + name_len + 12;
    at = s.payload + s.length;
    l.sections.push_back(s);
  }
  return l;
}
const Section& section(const Layout& l, const std::string& name) {
  for (const Section& s : l.sections)
    if (s.name == name) return s;
  throw std::runtime_error("no section " + name);
}
// Replaces a section's payload and fixes its length and CRC: a well-formed checkpoint with other content.
Bytes with_payload(const Bytes& b, const std::string& name, const Bytes& payload) {
  const Layout l = layout_of(b);
  const Section& s = section(l, name);
  Bytes out(b.begin(), b.begin() + s.payload);
  put_le(out, s.payload - 12, payload.size(), 8);
  put_le(out, s.payload - 4, crc32(payload.data(), payload.size()), 4);
  out.insert(out.end(), payload.begin(), payload.end());
  out.insert(out.end(), b.begin() + s.payload + s.length, b.end());
  return out;
}
Bytes payload_of(const Bytes& b, const std::string& name) {
  const Layout l = layout_of(b);
  const Section& s = section(l, name);
  return Bytes(b.begin() + s.payload, b.begin() + s.payload + s.length);
}

// What must not change when a restore is rejected.
struct Snapshot {
  Bytes state;  // the target's own checkpoint: every unit's state (SBUF's bytes included) and the time
  std::uint64_t time = 0;
  Bytes psum;
  std::vector<std::uint32_t> csrs;
  bool operator==(const Snapshot& o) const {
    return state == o.state && time == o.time && psum == o.psum && csrs == o.csrs;
  }
};
Snapshot snapshot(platform::Platform& p) {
  Snapshot s;
  s.state = platform::save_checkpoint(p);
  s.time = sc_core::sc_time_stamp().value();
  s.psum.assign(p.psum.data(), p.psum.data() + p.psum.size());
  for (const auto& f : p.csrs.state().faces) s.csrs.insert(s.csrs.end(), f.regs.values.begin(), f.regs.values.end());
  return s;
}

// Runs A, takes the checkpoint, runs B, then `check` on the target with the checkpoint's bytes.
void with_target(const std::function<void(platform::Driver&, platform::Platform&, const Bytes&)>& check) {
  platform::VpConfig cfg = scenario_config(kGen);
  platform::VirtualPlatform vp(cfg);
  vp.run([&](platform::Driver& d) {
    run_a(d, cfg.geometry, kGen, cfg.mode);
    const Bytes cut = platform::save_checkpoint(vp.platform());
    run_b(d, kGen);
    check(d, vp.platform(), cut);
  });
}

// The restore of `bytes` fails with a message that contains every one of `parts`, and nothing changes.
void expect_rejected(platform::Platform& p, const Bytes& bytes, const std::vector<std::string>& parts,
                     const std::string& what, bool check_unchanged = true) {
  const Snapshot before = check_unchanged ? snapshot(p) : Snapshot{};
  try {
    platform::restore_checkpoint(p, bytes, "t.ckpt");
    ADD_FAILURE() << what << ": accepted";
  } catch (const platform::CheckpointError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("checkpoint t.ckpt: ", 0), 0u) << what << ": " << m;
    for (const std::string& part : parts) EXPECT_NE(m.find(part), std::string::npos) << what << ": " << m;
  }
  if (check_unchanged) {
    EXPECT_TRUE(snapshot(p) == before) << what << ": the target changed";
  }
}

TEST(CheckpointRejection, TruncatedAtManyOffsets) {
  with_target([](platform::Driver&, platform::Platform& p, const Bytes& cut) {
    const Layout l = layout_of(cut);
    std::vector<std::size_t> offsets;
    for (std::size_t i = 1; i <= l.header_end + 2; ++i) offsets.push_back(i);
    for (const Section& s : l.sections)
      for (std::size_t i = s.header; i < s.payload + 3 && i < cut.size(); ++i) offsets.push_back(i);
    for (std::size_t i = 1; i < 41; ++i) offsets.push_back(cut.size() * i / 41);
    offsets.push_back(cut.size() - 1);
    expect_rejected(p, {}, {"empty file (0 bytes)"}, "0 bytes");
    // The target is compared before and after every eighth cut (a snapshot costs more than a rejection), and
    // before and after all of them.
    const Snapshot before = snapshot(p);
    std::size_t tried = 0;
    for (std::size_t n : offsets) {
      if (n == 0 || n >= cut.size()) continue;
      // The section the cut falls in (or whose header it cuts) is named.
      std::string where = "the header";
      for (const Section& s : l.sections)
        if (n >= s.header) where = "section '" + s.name + "'";
      expect_rejected(p, Bytes(cut.begin(), cut.begin() + n), {"truncated in " + where},
                      "cut at " + std::to_string(n), ++tried % 8 == 0);
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(tried, 100u);
    EXPECT_TRUE(snapshot(p) == before) << "the target changed";
  });
}

TEST(CheckpointRejection, AFlippedByteInEachSectionFailsItsCrc) {
  with_target([](platform::Driver&, platform::Platform& p, const Bytes& cut) {
    const Layout l = layout_of(cut);
    ASSERT_EQ(l.sections.size(), 8u);
    for (const Section& s : l.sections)
      for (std::size_t at : {s.payload, s.payload + s.length / 2, s.payload + s.length - 1}) {
        Bytes bad = cut;
        bad[at] ^= 0x40;
        expect_rejected(p, bad, {"CRC mismatch in section '" + s.name + "'"}, s.name + " byte " + std::to_string(at));
      }
    // A changed section name: the section expected there is named.
    Bytes renamed = cut;
    renamed[section(l, "psum").header + 2] = 'x';
    expect_rejected(p, renamed, {"expected section 'psum' at byte", "found 'xsum'"}, "renamed section");
  });
}

TEST(CheckpointRejection, WrongMagicVersionGenerationAndTrailingBytes) {
  with_target([](platform::Driver&, platform::Platform& p, const Bytes& cut) {
    Bytes magic = cut;
    magic[3] = 'X';
    expect_rejected(p, magic, {"not a pe-vp checkpoint (magic 'PEVXCKPT' at byte 0, expected 'PEVPCKPT')"}, "magic");
    Bytes version = cut;
    put_le(version, 8, platform::kCheckpointFormatVersion + 1, 4);
    expect_rejected(p, version,
                    {"format version " + std::to_string(platform::kCheckpointFormatVersion + 1) +
                     ", this pe-vp reads version " + std::to_string(platform::kCheckpointFormatVersion)},
                    "version");
    // The generation string rewritten (it is outside every section, so no CRC covers it).
    const std::size_t old_len = le(cut, 12, 4);
    for (const std::string& gen : {std::string("CAYMAN"), std::string("MAVERICK")}) {
      Bytes other(cut.begin(), cut.begin() + 12);
      other.resize(16);
      put_le(other, 12, gen.size(), 4);
      other.insert(other.end(), gen.begin(), gen.end());
      other.insert(other.end(), cut.begin() + 16 + old_len, cut.end());
      expect_rejected(p, other, {"written for generation " + gen + ", this VP is MARIANA"}, gen);
    }
    Bytes unknown(cut.begin(), cut.begin() + 12);
    unknown.resize(16);
    put_le(unknown, 12, 4, 4);
    for (char c : std::string("NOPE")) unknown.push_back(static_cast<std::uint8_t>(c));
    unknown.insert(unknown.end(), cut.begin() + 16 + old_len, cut.end());
    expect_rejected(p, unknown, {"written for generation 'NOPE', which this pe-vp does not know"}, "unknown gen");
    Bytes trailing = cut;
    trailing.push_back(0);
    expect_rejected(p, trailing, {"1 bytes after the last section"}, "trailing");
  });
}

TEST(CheckpointRejection, AnotherConfigurationOrGeometry) {
  with_target([](platform::Driver&, platform::Platform& p, const Bytes& cut) {
    const Bytes payload = payload_of(cut, "config");
    const std::string text(payload.begin() + 4, payload.end());
    const auto with_config = [&](const nlohmann::json& j) {
      const std::string t = j.dump();
      Bytes pl(4);
      put_le(pl, 0, t.size(), 4);
      pl.insert(pl.end(), t.begin(), t.end());
      return with_payload(cut, "config", pl);
    };
    nlohmann::json fifo = nlohmann::json::parse(text);
    fifo["arr_seq"]["ififo_depth"] = 8;
    expect_rejected(p, with_config(fifo), {"configuration differs: arr_seq.ififo_depth is 8 in the checkpoint, 16 here"},
                    "ififo depth");
    nlohmann::json rows = nlohmann::json::parse(text);
    rows["geometry"]["pe_rows"] = 64;
    expect_rejected(p, with_config(rows), {"configuration differs: geometry.pe_rows is 64 in the checkpoint, 128 here"},
                    "geometry");
    nlohmann::json extra = nlohmann::json::parse(text);
    extra["future"]["knob"] = 1;
    expect_rejected(p, with_config(extra),
                    {"configuration differs: future.knob = 1 in the checkpoint, this pe-vp has no such key"}, "extra");
    expect_rejected(p, with_payload(cut, "config", {3, 0, 0, 0, '{', '"', 'x'}), {"section 'config' is not a JSON object"},
                    "not JSON");
    // The same bytes read against another configuration, without a platform: the clock differs.
    platform::VpConfig other = p.vp_config();
    platform::apply_override(other, "tensor_engine.clock_ghz=1.4");
    try {
      platform::read_checkpoint(cut.data(), cut.size(), other, "t.ckpt");
      ADD_FAILURE() << "read against another clock";
    } catch (const platform::CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("configuration differs: tensor_engine.clock_ghz is 2.4 in the checkpoint, 1.4 here"),
                std::string::npos)
          << e.what();
    }
  });
}

// A checkpoint from the future (its time moved ahead, CRC fixed) passes the time rule, so a unit's own rule is
// what rejects it -- before anything changes, the time included (the restore would otherwise wait for it).
TEST(CheckpointRejection, AUnitRuleRejectsWellFormedContentAndNothingWaits) {
  with_target([](platform::Driver&, platform::Platform& p, const Bytes& cut) {
    Bytes time = payload_of(cut, "time");
    put_le(time, 8, le(time, 8, 8) * 1000, 8);
    const Bytes future = with_payload(cut, "time", time);
    // The top face's first register value with every bit set: bits no field stores.
    Bytes csrs = payload_of(future, "csrs");
    const std::size_t name_len = le(csrs, 0, 4);
    put_le(csrs, 4 + name_len + 4, 0xFFFFFFFFu, 4);
    expect_rejected(p, with_payload(future, "csrs", csrs),
                    {"section 'csrs': tpb_arr_seq_top_host_visible: register", "holds 0xffffffff, with bits no field of it stores"},
                    "register bits");
    // The SEQ's queue holding instructions while it is not stopped on a fault: the error flag cleared.
    Bytes seq = payload_of(future, "seq");
    const std::size_t queued = le(seq, 0, 4);
    ASSERT_EQ(queued, 2u) << "the cut holds A's two queued instructions";
    const std::size_t error_flag = 4 + queued * 72 + 8 + 1 + 8 + 8 + 1;
    ASSERT_EQ(seq[error_flag], 1);
    seq[error_flag] = 0;
    Bytes no_error = seq;
    no_error.erase(no_error.begin() + error_flag + 1, no_error.end());
    // Drop the record: the rest of the section follows it. Find the record's end from its strings.
    std::size_t at = error_flag + 1 + 8 + 1 + 1 + 2;
    for (int s = 0; s < 2; ++s) at += 4 + le(seq, at, 4);
    at += 8;
    at += 4 + le(seq, at, 4);
    no_error.insert(no_error.end(), seq.begin() + at, seq.end());
    expect_rejected(p, with_payload(future, "seq", no_error),
                    {"section 'seq': the queue holds 2 instruction(s) but the SEQ is not stopped on a fault"}, "queue");
    // A boolean that is not 0 or 1.
    Bytes flag = payload_of(future, "seq");
    flag[error_flag] = 7;
    expect_rejected(p, with_payload(future, "seq", flag), {"the error flag = 7 is not a boolean (0 or 1)"}, "boolean");
    // A count past the queue's depth, and one the section cannot hold: refused before anything is allocated.
    Bytes big = payload_of(future, "seq");
    put_le(big, 0, 258, 4);
    expect_rejected(p, with_payload(future, "seq", big),
                    {"section 'seq' at byte", "the queued instruction count = 258, at most 257"}, "count");
    put_le(big, 0, 257, 4);
    expect_rejected(p, with_payload(future, "seq", big),
                    {"the queued instruction count = 257 needs at least 18504 bytes, the section has"}, "count");
  });
}

TEST(CheckpointRejection, TheTargetIsPastTheCheckpointsTime) {
  with_target([](platform::Driver&, platform::Platform& p, const Bytes& cut) {
    expect_rejected(p, cut, {"of simulated time, this VP is already at"}, "time");
  });
}

TEST(CheckpointRejection, SaveAndRestoreRefusedWhileNotIdle) {
  with_target([](platform::Driver& d, platform::Platform& p, const Bytes& cut) {
    std::vector<isa::RawInstruction> many(40, matmul(kGen, 0x1000, 7, pf::SINGLE));
    d.submit(many);
    sc_core::wait(sc_core::sc_time(50, sc_core::SC_NS));
    try {
      platform::save_checkpoint(p);
      ADD_FAILURE() << "saved while busy";
    } catch (const platform::CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot save a checkpoint: the platform is not at an idle point: "),
                std::string::npos)
          << e.what();
      EXPECT_TRUE(std::string(e.what()).find("in flight") != std::string::npos ||
                  std::string(e.what()).find("queued") != std::string::npos)
          << e.what();
    }
    Bytes future = cut;
    {
      Bytes time = payload_of(cut, "time");
      put_le(time, 8, le(time, 8, 8) * 1000, 8);
      future = with_payload(cut, "time", time);
    }
    const sc_core::sc_time before = sc_core::sc_time_stamp();
    try {
      platform::restore_checkpoint(p, future, "t.ckpt");
      ADD_FAILURE() << "restored into a busy platform";
    } catch (const platform::CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("the target platform is not at an idle point"), std::string::npos) << e.what();
    }
    EXPECT_EQ(sc_core::sc_time_stamp(), before);
    const platform::Completion c = d.wait_idle();
    EXPECT_TRUE(c.done && !c.error);
    EXPECT_EQ(platform::idle_point_violation(p), "");
  });
}

TEST(CheckpointRejection, FilesThatAreNotCheckpoints) {
  with_target([](platform::Driver&, platform::Platform& p, const Bytes&) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("pevp_ckpt_files_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "empty.ckpt").close();
    const Snapshot before = snapshot(p);
    const auto rejected = [&](const std::filesystem::path& path, const std::string& part) {
      try {
        platform::restore_checkpoint_file(p, path.string());
        ADD_FAILURE() << path << ": accepted";
      } catch (const platform::CheckpointError& e) {
        EXPECT_EQ(std::string(e.what()), "checkpoint " + path.string() + ": " + part);
      }
    };
    rejected(dir / "empty.ckpt", "empty file (0 bytes)");
    rejected(dir, "is a directory");
    rejected(dir / "missing.ckpt", "cannot open: No such file or directory");
    EXPECT_TRUE(snapshot(p) == before);
    // A file that cannot be written: the path and the reason.
    try {
      platform::save_checkpoint_file(p, (dir / "no" / "such" / "dir.ckpt").string());
      ADD_FAILURE() << "saved into a missing directory";
    } catch (const platform::CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find((dir / "no" / "such" / "dir.ckpt").string()), std::string::npos) << e.what();
    }
    std::filesystem::remove_all(dir);
  });
}

// The valid checkpoint restores into a platform at its time, in the same process, and saving again gives its bytes.
TEST(CheckpointRestore, SavingAfterARestoreGivesTheSameBytes) {
  platform::VpConfig cfg = scenario_config(kGen);
  platform::VirtualPlatform vp(cfg);
  vp.run([&](platform::Driver& d) {
    run_a(d, cfg.geometry, kGen, cfg.mode);
    const Bytes cut = platform::save_checkpoint(vp.platform());
    platform::restore_checkpoint(vp.platform(), cut, "t.ckpt");
    EXPECT_TRUE(platform::save_checkpoint(vp.platform()) == cut);
  });
}

}  // namespace
