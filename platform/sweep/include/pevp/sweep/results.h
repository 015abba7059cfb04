// A sweep's files (docs/sweeps.md "Outputs"): the plan of the sweep (DIR/sweep.json: every point with its key and
// its `pe-vp gemm` arguments, so the backends and --collect need no spec), one record per point
// (DIR/points/KEY.json, written atomically when the point ends), and the merged results (results.csv, summary.json).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/sweep/spec.h"

namespace pevp::sweep {

// A stable 64-bit FNV-1a hash of `text`, as 16 hex digits: a point's key is that of the canonical JSON of its
// whole effective configuration and workload, so two points that would simulate the same thing share a key.
std::string key_of(const std::string& text);
// The same hash over a text given in pieces: Fnv1a().add(a).add(b).hex() == key_of(a + b). A sweep hashes the part
// of its points' text that a configuration shares once, and goes on from a copy for each of its points.
class Fnv1a {
 public:
  Fnv1a& add(std::string_view text);
  std::string hex() const;

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;  // the FNV-1a 64 offset basis
};

// A planned point: where it comes from, what it runs, its key.
struct PlannedPoint {
  Point point;
  std::string key;
  std::vector<std::string> args;  // `pe-vp gemm` arguments, without --stats-json and --quiet
  std::string gen, dtype;         // effective (for the CSV)
};

struct SweepPlan {
  std::string name;
  std::string spec_path;
  std::vector<std::string> swept;  // the swept parameter names
  // The spec's [plots] baseline, {name: value} (an empty object: none given); the plots' speedups are against it.
  nlohmann::json baseline = nlohmann::json::object();
  std::vector<PlannedPoint> points;
};

nlohmann::json to_json(const SweepPlan& plan);
nlohmann::json to_json(const PlannedPoint& point);  // one element of the plan's "points"
// The plan's JSON text, the document to_json(plan) is, written point by point: a plan of 1,000,000 points is never
// one document in memory (it took 6.9 GB). One point a line.
void write_plan(std::ostream& out, const SweepPlan& plan);
// Throws SpecError naming `source` and what is malformed.
SweepPlan plan_from_json(const nlohmann::json& doc, const std::string& source);
// The plan from the text of sweep.json, read point by point (documents::parse_json: its nesting bounded): the same
// plan as plan_from_json of the parsed document, without the document. Throws SpecError.
SweepPlan read_plan_text(std::string_view text, const std::string& source);

// The per-point files.
std::string points_dir(const std::string& out_dir);
std::string record_path(const std::string& out_dir, const std::string& key);
// The record of a finished point, or none when it has not finished (or its record is unreadable: it reruns).
std::optional<nlohmann::json> read_record(const std::string& out_dir, const std::string& key);
// Writes the record atomically (a temporary file renamed over it). Returns "" or the error.
std::string write_record(const std::string& out_dir, const std::string& key, const nlohmann::json& record);
// The record of a successful point from the `pe-vp gemm --stats-json` document: the figures the CSV reports.
nlohmann::json ok_record(const nlohmann::json& stats, double wall_s);
nlohmann::json failed_record(const std::string& error, int exit_status, double wall_s);

// One row per point in the plan's order: identity, the swept parameters (p:NAME), the figures, stall:REASON,
// acct:SHARE, instr:OPCODE (the union over the points), mem:* (when a point used device memory), wall_s. A point without a record is status "missing".
// `with_wall`: false leaves wall_s out (to compare two runs of one sweep).
std::string results_csv(const SweepPlan& plan, const std::vector<std::optional<nlohmann::json>>& records,
                        bool with_wall = true);
// Network-level totals per (configuration, workload): cycles = sum of count x cycles, time, MACs, TFLOPS, the
// cycle-weighted utilisation, the accounting, the energy, the points ok / failed / missing; the baseline; and the
// notes a reader needs to read the figures (dtype_rate_notes).
nlohmann::json summary(const SweepPlan& plan, const std::vector<std::optional<nlohmann::json>>& records);

// What the sweep's figures cannot say by themselves: fp8 run without double_row contracts one row per partition, at
// the bf16 rate (the same cycles and peak as bf16), so it looks like bf16 with no hint of why. One note per (gen,
// dtype) that did so, naming the configurations and the key to set (none on MAVERICK, whose perf_mode pumps MX sources
// only). A dtype is fp8 when its name starts with "fp8" (fp8_e4m3, ..., FP8_EXP4), as `pe-vp gemm --dtype` takes them.
std::vector<std::string> dtype_rate_notes(const SweepPlan& plan);
bool runs_fp8_at_bf16_rate(const std::string& dtype, bool double_row);

// Writes `text` to `path` atomically. Returns "" or the error.
std::string write_text_atomically(const std::string& path, const std::string& text);

}  // namespace pevp::sweep
