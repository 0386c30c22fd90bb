#include "experiments/studies/study_journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace epsim::experiments {

std::string record_line(const RunRecord& r) {
  nlohmann::ordered_json j;
  j["key"] = r.key;
  j["run"] = r.run;
  j["wall_s"] = r.wall_s;
  j["routing_loops"] = r.routing_loops;
  j["error"] = r.error;
  nlohmann::ordered_json m = nlohmann::ordered_json::array();
  for (const auto& [name, value] : r.metrics) {
    // NaN has no JSON form: null stands for it.
    m.push_back(nlohmann::ordered_json::array(
        {name, std::isnan(value) ? nlohmann::ordered_json() : nlohmann::ordered_json(value)}));
  }
  j["metrics"] = m;
  return j.dump() + "\n";
}

bool parse_record_line(const std::string& line, RunRecord& out) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("key") || !j.contains("metrics") || !j["key"].is_string() ||
      !j["metrics"].is_array()) {
    return false;
  }
  RunRecord r;
  r.key = j["key"].get<std::string>();
  r.run = j.value("run", std::int64_t{0});
  r.wall_s = j.value("wall_s", 0.0);
  r.routing_loops = j.value("routing_loops", std::int64_t{0});
  r.error = j.value("error", std::string());
  for (const auto& e : j["metrics"]) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !(e[1].is_number() || e[1].is_null())) {
      return false;
    }
    r.metrics.emplace_back(e[0].get<std::string>(),
                           e[1].is_null() ? std::numeric_limits<double>::quiet_NaN() : e[1].get<double>());
  }
  out = std::move(r);
  return true;
}

Journal::Journal(const std::filesystem::path& dir, const std::string& writer) {
  const std::filesystem::path folder = dir / "journal";
  std::filesystem::create_directories(folder);
  path_ = folder / (writer + ".jsonl");
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw core::Error(fmt::format("cannot open the journal {}: {}", path_.string(), std::strerror(errno)));
  }
  // A writer killed mid-line left no newline: start on a fresh line so the next record parses.
  std::ifstream in(path_, std::ios::binary | std::ios::ate);
  if (in && in.tellg() > 0) {
    in.seekg(-1, std::ios::end);
    char last = '\n';
    in.get(last);
    if (last != '\n') {
      append(RunRecord{});  // never parses as a record: an empty key has no metrics to match
    }
  }
}

Journal::~Journal() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

void Journal::append(const RunRecord& r) {
  const std::string line = r.key.empty() ? std::string("\n") : record_line(r);
  const std::lock_guard<std::mutex> lock(mutex_);
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw core::Error(fmt::format("cannot append to the journal {}: {}", path_.string(), std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

std::map<std::string, RunRecord> Journal::load(const std::filesystem::path& dir) {
  std::map<std::string, RunRecord> out;
  const std::filesystem::path folder = dir / "journal";
  if (!std::filesystem::is_directory(folder)) {
    return out;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    if (e.is_regular_file() && e.path().extension() == ".jsonl") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
      RunRecord r;
      if (parse_record_line(line, r) && r.error.empty()) {
        out.emplace(r.key, std::move(r));
      }
    }
  }
  return out;
}

}  // namespace epsim::experiments
