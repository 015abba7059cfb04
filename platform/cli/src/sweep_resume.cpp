#include "sweep_resume.h"

#include <cctype>
#include <string_view>
#include <vector>

namespace pevp::platform {
namespace {

// As it is where a shell would take it as one word, else in single quotes ('\'' for a quote).
std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./:=@%+,-").find(c) != std::string_view::npos))
      plain = false;
  if (plain) return s;
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string resume_command(const SweepCommand& cmd) {
  std::vector<std::string> words = {cmd.pe_vp, "sweep", cmd.spec_path, "--out", cmd.out_dir, "--resume"};
  if (cmd.retry_failed) words.push_back("--retry-failed");
  if (cmd.backend != "local") words.insert(words.end(), {"--backend", cmd.backend});
  if (cmd.jobs != 0) words.insert(words.end(), {"--jobs", std::to_string(cmd.jobs)});
  if (!cmd.plots) words.push_back("--no-plots");
  if (cmd.scalesim_report) words.push_back("--scalesim-report");
  if (!cmd.partition.empty()) words.insert(words.end(), {"--partition", cmd.partition});
  if (!cmd.time.empty()) words.insert(words.end(), {"--time", cmd.time});
  for (const std::string& a : cmd.sbatch_args) words.insert(words.end(), {"--sbatch-arg", a});
  if (cmd.chunk_size != 0) words.insert(words.end(), {"--chunk-size", std::to_string(cmd.chunk_size)});
  if (cmd.wait) words.push_back("--wait");
  if (cmd.isolation != sweep::PointIsolation::Fork)
    words.insert(words.end(), {"--point-isolation", sweep::name(cmd.isolation)});
  if (cmd.progress == Progress::Style::Off) words.push_back("--quiet");
  std::string line;
  for (const std::string& w : words) line += (line.empty() ? "" : " ") + shell_word(w);
  return line;
}

}  // namespace pevp::platform
