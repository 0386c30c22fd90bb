// SPDX-License-Identifier: Apache-2.0
#include "workloads/sharegpt_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_depth.hpp"
#include "core/random_streams.hpp"
#include "workloads/content_id.hpp"
#include "workloads/request.hpp"

namespace epsim::workloads {

namespace {

enum class Role : std::uint8_t { none, human, gpt, system };

Role role_of(const std::string& from) {
  if (from == "human" || from == "user") {
    return Role::human;
  }
  if (from == "gpt" || from == "assistant" || from == "chatgpt" || from == "bard" || from == "bing") {
    return Role::gpt;
  }
  return from == "system" ? Role::system : Role::none;
}

// Unicode code points of UTF-8 text (the parser has checked the encoding): bytes that start one.
std::int64_t code_points(const std::string& text) {
  return static_cast<std::int64_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U; }));
}

// Where the parse is: the list of conversations (level 1), a conversation object (2), its messages (3),
// a message object (4). Values the reader does not use (other keys' values) are skipped whole.
class ShareGptHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  ShareGptHandler(std::string source, double chars_per_token, ConversationSet& out)
      : source_(std::move(source)), chars_per_token_(chars_per_token), out_(out) {}

  bool null() override { return scalar("null"); }
  bool boolean(bool) override { return scalar("a boolean"); }
  bool number_integer(number_integer_t) override { return scalar("a number"); }
  bool number_unsigned(number_unsigned_t) override { return scalar("a number"); }
  bool number_float(number_float_t, const string_t&) override { return scalar("a number"); }
  bool binary(binary_t&) override { return scalar("binary data"); }
  bool string(string_t& s) override {
    if (skip_ == 0 && level_ == 4) {
      if (key_ == "from") {
        from_ = s;
        has_from_ = true;
      } else if (key_ == "value") {
        text_ = std::move(s);
        has_value_ = true;
      }
      return true;
    }
    return scalar("a string");
  }

  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    throw core::Error(fmt::format("{}: invalid JSON at byte {}: {}", source_, position, e.what()));
  }

  bool finished() const { return done_; }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw core::Error(fmt::format("{}: {}", source_, what)); }
  std::string where() const { return fmt::format("conversation [{}]", conversation_); }
  std::string where_message() const { return fmt::format("{}: message [{}]", where(), message_); }

  // A scalar value: only where the format puts one (a used key's string), else skipped or refused.
  bool scalar(const char* what) {
    if (skip_ == 0 && level_ == 2 && key_ == "conversations") {
      fail(fmt::format("{}: \"conversations\" must be a list, got {}", where(), what));
    }
    if (skip_ > 0 || level_ == 2 || (level_ == 4 && key_ != "from" && key_ != "value")) {
      return true;  // the value of a key the reader does not use
    }
    switch (level_) {
      case 0:
        fail(fmt::format("expected a JSON list of conversations, got {}", what));
      case 1:
        fail(fmt::format("conversation [{}]: expected an object, got {}", conversation_ + 1, what));
      case 3:
        fail(fmt::format("{}: expected an object, got {}", where_message(), what));
      default:
        fail(fmt::format("{}: \"{}\" must be a string, got {}", where_message(), key_, what));
    }
  }

  bool open(bool array) {
    if (++depth_ > core::k_max_json_depth) {
      fail(fmt::format("JSON nests deeper than {} levels", core::k_max_json_depth));
    }
    if (skip_ == 0 && level_ == 2 && key_ == "conversations" && !array) {
      fail(fmt::format("{}: \"conversations\" must be a list, got an object", where()));
    }
    if (skip_ > 0 || (level_ == 2 && key_ != "conversations") || (level_ == 4 && key_ != "from" && key_ != "value")) {
      ++skip_;
      return true;
    }
    switch (level_) {
      case 0:
        if (!array) {
          fail("expected a JSON list of conversations, got an object");
        }
        break;
      case 1:
        if (array) {
          fail(fmt::format("conversation [{}]: expected an object, got a list", conversation_ + 1));
        }
        begin_conversation();
        break;
      case 2:
        has_messages_ = true;
        break;
      case 3:
        if (array) {
          fail(fmt::format("{}: expected an object, got a list", where_message()));
        }
        has_from_ = has_value_ = false;
        ++message_;
        break;
      default:
        fail(fmt::format("{}: \"{}\" must be a string, got {}", where_message(), key_, array ? "a list" : "an object"));
    }
    ++level_;
    key_.clear();
    return true;
  }

  bool close() {
    --depth_;
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    --level_;
    switch (level_) {
      case 0:
        done_ = true;
        break;
      case 1:
        end_conversation();
        break;
      case 3:
        end_message();
        break;
      default:
        break;
    }
    key_.clear();
    return true;
  }

  void begin_conversation() {
    ++conversation_;
    message_ = -1;
    has_messages_ = false;
    system_text_.clear();
    system_tokens_ = user_ = answer_ = 0;
    first_turn_ = out_.turns.size();
  }

  std::int64_t tokens(const std::string& text) const {
    const double estimate = std::ceil(static_cast<double>(code_points(text)) / chars_per_token_);
    return std::clamp(static_cast<std::int64_t>(estimate), std::int64_t{1}, k_max_request_tokens);
  }
  static std::int64_t add(std::int64_t a, std::int64_t b) { return std::min(a + b, k_max_request_tokens); }

  void end_message() {
    if (!has_from_ || !has_value_) {
      fail(fmt::format("{}: expected {{\"from\": ..., \"value\": ...}}, missing \"{}\"", where_message(),
                       has_from_ ? "value" : "from"));
    }
    const Role role = role_of(from_);
    if (role == Role::none) {
      fail(fmt::format("{}: unknown \"from\" \"{}\" (expected human, gpt or system; user, assistant too)",
                       where_message(), from_));
    }
    const std::int64_t n = tokens(text_);
    const bool first_turn_open = user_ == 0 && out_.turns.size() == first_turn_;
    if (role == Role::system && first_turn_open) {
      system_text_ += text_;
      system_tokens_ = add(system_tokens_, n);
    } else if (role == Role::human || role == Role::system) {  // a later system message joins the user's
      close_turn();
      user_ = add(user_, n);
    } else if (user_ > 0) {  // gpt answering; a gpt message before any human one is skipped
      answer_ = add(answer_, n);
    }
  }

  // A user message with its answer becomes a turn once the next user message starts (or the
  // conversation ends).
  void close_turn() {
    if (user_ > 0 && answer_ > 0) {
      if (out_.turns.size() - first_turn_ >= static_cast<std::size_t>(k_max_session_turns)) {
        fail(fmt::format("{}: more than {} turns", where(), k_max_session_turns));
      }
      out_.turns.push_back({user_, answer_});
      user_ = answer_ = 0;
    }
  }

  void end_conversation() {
    if (!has_messages_) {
      fail(fmt::format("{}: no \"conversations\" list", where()));
    }
    close_turn();
    user_ = answer_ = 0;  // an unanswered last message
    const std::size_t turns = out_.turns.size() - first_turn_;
    if (turns == 0) {
      ++out_.skipped;
      return;
    }
    Conversation c;
    c.index = conversation_;
    c.system_tokens = system_tokens_;
    c.system_hash = system_tokens_ > 0 ? core::stable_hash(system_text_) : 0;
    c.first_turn = first_turn_;
    c.turns = turns;
    out_.conversations.push_back(c);
  }

  std::string source_;
  double chars_per_token_;
  ConversationSet& out_;
  int depth_ = 0;  // every open container, skipped ones too
  int level_ = 0;  // the containers the format defines that are open
  int skip_ = 0;   // open containers inside a skipped value
  bool done_ = false;
  std::string key_;
  std::int64_t conversation_ = -1;
  std::int64_t message_ = -1;
  bool has_messages_ = false;
  bool has_from_ = false;
  bool has_value_ = false;
  std::string from_;
  std::string text_;
  std::string system_text_;
  std::int64_t system_tokens_ = 0;
  std::int64_t user_ = 0;
  std::int64_t answer_ = 0;
  std::size_t first_turn_ = 0;
};

}  // namespace

ConversationSet read_sharegpt(std::istream& in, const std::string& source, double chars_per_token) {
  ConversationSet out;
  ShareGptHandler handler(source, chars_per_token, out);
  nlohmann::json::sax_parse(in, &handler);
  if (!handler.finished()) {
    throw core::Error(source + ": expected a JSON list of conversations");
  }
  if (out.conversations.empty()) {
    throw core::Error(fmt::format("{}: no conversation has a human message answered by a gpt message ({} read)", source,
                                  out.skipped));
  }
  return out;
}

ConversationSet read_sharegpt(const std::string& path, double chars_per_token) {
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (ec) {
    throw core::Error(path + ": cannot read the conversation file (" + ec.message() + ")");
  }
  if (bytes > k_max_conversation_file_bytes) {
    throw core::Error(fmt::format("{}: {} bytes, more than the {} a conversation file may have", path, bytes,
                                  k_max_conversation_file_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(path + ": cannot read the conversation file");
  }
  return read_sharegpt(in, path, chars_per_token);
}

}  // namespace epsim::workloads
