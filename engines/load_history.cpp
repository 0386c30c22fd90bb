// SPDX-License-Identifier: Apache-2.0
#include "engines/load_history.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"

namespace epsim::engines {
namespace {

// Tracks where each SAX event sits; collects the numbers at
// load_history[i].logical_expert_load[l][e] and hands each entry over when its object closes.
class HistoryHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  HistoryHandler(std::string file, const std::function<void(std::int64_t, const LoadMatrix&)>& on_entry)
      : file_(std::move(file)), on_entry_(on_entry) {}

  bool null() override { return scalar("null"); }
  bool boolean(bool) override { return scalar("a boolean"); }
  bool number_integer(number_integer_t v) override { return number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return number(v); }
  bool string(string_t&) override { return scalar("a string"); }
  bool binary(binary_t&) override { return scalar("binary data"); }

  bool start_object(std::size_t) override {
    advance();
    if (in_entry_list() && frames_.size() == 2) {
      has_load_ = false;
      load_.clear();
    } else if (in_load()) {
      fail("expected a number or a list, got an object");
    }
    frames_.push_back(Frame{false, -1, {}});
    return true;
  }
  bool key(string_t& k) override {
    frames_.back().key = k;
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    if (in_entry_list() && frames_.size() == 2) {  // an entry just closed
      const std::int64_t i = frames_.back().index;
      if (!has_load_) {
        fail(fmt::format("load_history[{}] has no \"logical_expert_load\"", i));
      }
      if (load_.empty() || load_[0].empty()) {
        fail(fmt::format("load_history[{}].logical_expert_load is empty", i));
      }
      for (std::size_t l = 1; l < load_.size(); ++l) {
        if (load_[l].size() != load_[0].size()) {
          fail(fmt::format("load_history[{}].logical_expert_load[{}] has {} experts, layer 0 has {}", i, l,
                           load_[l].size(), load_[0].size()));
        }
      }
      on_entry_(i, load_);
      ++entries_;
    }
    return true;
  }
  bool start_array(std::size_t) override {
    advance();
    if (frames_.size() == 1 && frames_[0].key == "load_history") {
      seen_history_ = true;
    }
    const std::size_t depth = load_depth();
    if (depth == 1) {
      has_load_ = true;
    } else if (depth == 2) {
      load_.emplace_back();
    } else if (depth > 2) {
      fail("expected [[load per expert] per layer], got a list nested deeper");
    }
    frames_.push_back(Frame{true, -1, {}});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    throw core::Error(fmt::format("{}: invalid JSON at byte {}: {}", file_, position, e.what()));
  }

  std::int64_t entries() const { return entries_; }
  bool seen_history() const { return seen_history_; }

 private:
  struct Frame {
    bool array = false;
    std::int64_t index = -1;  ///< arrays: the current element
    std::string key;          ///< objects: the current key
  };

  // A value starts: arrays move to their next element.
  void advance() {
    if (!frames_.empty() && frames_.back().array) {
      ++frames_.back().index;
    }
  }
  // Inside {"load_history": [ ... ]} (frames: root object, the list, ...).
  bool in_entry_list() const {
    return frames_.size() >= 2 && !frames_[0].array && frames_[0].key == "load_history" && frames_[1].array;
  }
  // How deep inside an entry's logical_expert_load the next value sits: 1 = the matrix itself, 2 = a
  // layer row, 3 = a load; 0 = elsewhere.
  std::size_t load_depth() const {
    if (!in_entry_list() || frames_.size() < 3 || frames_[2].array || frames_[2].key != "logical_expert_load") {
      return 0;
    }
    return frames_.size() - 2;
  }
  bool in_load() const { return load_depth() > 0; }
  std::string position() const {
    return fmt::format("load_history[{}].logical_expert_load[{}][{}]", frames_[1].index,
                       frames_.size() > 3 ? frames_[3].index : 0, frames_.size() > 4 ? frames_[4].index : 0);
  }
  [[noreturn]] void fail(const std::string& what) const { throw core::Error(file_ + ": " + what); }

  bool number(double v) {
    advance();
    const std::size_t depth = load_depth();
    if (depth == 3) {
      if (!(v >= 0.0) || !std::isfinite(v)) {
        fail(fmt::format("{}: expected a load >= 0, got {}", position(), v));
      }
      load_.back().push_back(v);
    } else if (depth > 0) {
      fail(fmt::format("{}: expected [[load per expert] per layer], got the number {}", position(), v));
    }
    return true;
  }
  bool scalar(const char* what) {
    advance();
    if (load_depth() > 0) {
      fail(fmt::format("{}: expected a number, got {}", position(), what));
    }
    return true;
  }

  std::string file_;
  const std::function<void(std::int64_t, const LoadMatrix&)>& on_entry_;
  std::vector<Frame> frames_;
  LoadMatrix load_;
  bool has_load_ = false;
  bool seen_history_ = false;
  std::int64_t entries_ = 0;
};

}  // namespace

std::int64_t read_load_history(const std::filesystem::path& path,
                               const std::function<void(std::int64_t, const LoadMatrix&)>& on_entry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(path.string() + ": cannot read");
  }
  HistoryHandler handler(path.string(), on_entry);
  nlohmann::json::sax_parse(in, &handler);
  if (!handler.seen_history()) {
    throw core::Error(path.string() +
                      ": expected {\"load_history\": [{\"logical_expert_load\": [[load per expert] per layer]}, ...]}");
  }
  return handler.entries();
}

}  // namespace epsim::engines
