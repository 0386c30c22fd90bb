// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/study_journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "core/csv_lines.hpp"
#include "core/error.hpp"

namespace epsim::experiments {

std::string record_line(const RunRecord& r) {
  nlohmann::ordered_json j;
  j["key"] = r.key;
  j["run"] = r.run;
  j["wall_s"] = r.wall_s;
  j["cpu_s"] = r.cpu_s;
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

namespace {

// A record nests four levels (object, metrics, pair, value); anything deeper is not one, and is refused
// before the parser sees it.
constexpr int k_max_record_depth = 8;

bool shallow(const std::string& line) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > k_max_record_depth) {
        return false;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

template <typename T>
bool read_optional(const nlohmann::json& j, const char* key, T& into) {
  const auto it = j.find(key);
  if (it == j.end()) {
    return true;
  }
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) {
      return false;
    }
  } else if constexpr (std::is_same_v<T, double>) {
    if (!it->is_number()) {
      return false;
    }
  } else {
    if (!it->is_number_integer()) {
      return false;
    }
  }
  into = it->get<T>();
  return true;
}

}  // namespace

bool parse_record_line(const std::string& line, RunRecord& out) {
  if (line.size() > k_max_record_bytes || !shallow(line)) {
    return false;
  }
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("key") || !j.contains("metrics") || !j["key"].is_string() ||
      !j["metrics"].is_array()) {
    return false;
  }
  RunRecord r;
  r.key = j["key"].get<std::string>();
  // Each field of its own type: a record with a string where a number belongs is not a record.
  if (r.key.empty() || !read_optional(j, "run", r.run) || !read_optional(j, "wall_s", r.wall_s) ||
      !read_optional(j, "cpu_s", r.cpu_s) || !read_optional(j, "routing_loops", r.routing_loops) ||
      !read_optional(j, "error", r.error)) {
    return false;
  }
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
  set_aside_torn_tail();
}

void Journal::set_aside_torn_tail() {
  // A writer killed mid-line left a line without its newline: it is no record (its run runs again), so
  // it moves to <writer>.jsonl.torn, for a look, and the journal ends at its last whole line again. Only
  // the file's end is read (a record is at most k_max_record_bytes).
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  const int rd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (size <= 0 || rd < 0) {
    if (rd >= 0) {
      ::close(rd);
    }
    return;
  }
  const auto window =
      static_cast<off_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(size), 2 * k_max_record_bytes));
  std::string tail(static_cast<std::size_t>(window), '\0');
  const ssize_t got = ::pread(rd, tail.data(), tail.size(), size - window);
  ::close(rd);
  if (got != window || tail.back() == '\n') {
    return;
  }
  const std::size_t newline = tail.rfind('\n');
  if (newline == std::string::npos && window < size) {
    return;  // longer than any record: load() skips it with a warning
  }
  const std::size_t from = newline == std::string::npos ? 0 : newline + 1;
  std::filesystem::path torn = path_;
  torn += ".torn";
  std::ofstream(torn, std::ios::binary | std::ios::app) << tail.substr(from) << "\n";
  if (::ftruncate(fd_, size - window + static_cast<off_t>(from)) != 0) {
    throw core::Error(
        fmt::format("cannot cut the torn last line off the journal {}: {}", path_.string(), std::strerror(errno)));
  }
}

Journal::~Journal() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

void Journal::append(const RunRecord& r) {
  const std::string line = record_line(r);
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
  // On disk before the run counts as done: a crash of the machine loses no finished run either.
  if (::fdatasync(fd_) != 0 && errno != EINVAL) {
    throw core::Error(fmt::format("cannot flush the journal {}: {}", path_.string(), std::strerror(errno)));
  }
}

std::map<std::string, RunRecord> Journal::load(const std::filesystem::path& dir, std::vector<std::string>* warnings) {
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
    core::CsvLines lines(in, "", f.string());  // bounded lines; a longer one is no record either
    std::int64_t bad = 0;
    std::int64_t first_bad = 0;
    while (true) {
      bool more = false;
      bool too_long = false;
      try {
        more = lines.next();
      } catch (const core::Error&) {
        too_long = true;  // read no further: the rest of this file cannot be split into lines
      }
      if (too_long) {
        ++bad;
        first_bad = first_bad > 0 ? first_bad : lines.line_no() + 1;
        break;
      }
      if (!more) {
        break;
      }
      RunRecord r;
      if (!parse_record_line(lines.line(), r)) {
        ++bad;
        first_bad = first_bad > 0 ? first_bad : lines.line_no();
      } else if (r.error.empty()) {
        out.emplace(r.key, std::move(r));
      }
    }
    if (bad > 0 && warnings != nullptr) {
      warnings->push_back(
          fmt::format("{}: {} line(s) are not run records (the first: line {}); skipped, so their "
                      "runs run again",
                      f.string(), bad, first_bad));
    }
  }
  return out;
}

}  // namespace epsim::experiments
