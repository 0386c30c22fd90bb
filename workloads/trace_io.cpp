// SPDX-License-Identifier: Apache-2.0
#include "workloads/trace_io.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <numeric>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"
#include "core/signal_cleanup.hpp"

namespace epsim::workloads {
namespace {

// Varint (LEB128) framing, as protobuf's delimited format: the size, then the message bytes.
void put_varint(std::ofstream& out, std::uint64_t v) {
  char buf[10];
  int n = 0;
  do {
    auto byte = static_cast<unsigned char>(v & 0x7FU);
    v >>= 7U;
    if (v != 0) {
      byte |= 0x80U;
    }
    buf[n++] = static_cast<char>(byte);
  } while (v != 0);
  out.write(buf, n);
}

}  // namespace

void validate_step(const trace::Header& h, const trace::Step& s, const std::string& where) {
  std::vector<std::uint32_t> id_counts;
  validate_step(h, s, where, id_counts);
}

void validate_step(const trace::Header& h, const trace::Step& s, const std::string& where,
                   std::vector<std::uint32_t>& id_counts) {
  const auto fail = [&](int layer, const std::string& what) {
    return core::Error(layer < 0 ? fmt::format("{}: step {}: {}", where, s.index(), what)
                                 : fmt::format("{}: step {}, layer {}: {}", where, s.index(), layer, what));
  };
  if (static_cast<std::uint32_t>(s.layers_size()) != h.moe_layers()) {
    throw fail(-1, fmt::format("has {} MoE layers, the header says {}", s.layers_size(), h.moe_layers()));
  }
  const std::uint64_t picks = static_cast<std::uint64_t>(s.tokens()) * h.top_k();
  for (int l = 0; l < s.layers_size(); ++l) {
    const trace::LayerLoad& layer = s.layers(l);
    if (static_cast<std::uint32_t>(layer.expert_tokens_size()) != h.experts()) {
      throw fail(
          l, fmt::format("has {} expert counts, the header says {} experts", layer.expert_tokens_size(), h.experts()));
    }
    std::uint64_t sum = 0;
    for (const std::uint32_t c : layer.expert_tokens()) {
      if (c > s.tokens()) {
        throw fail(l, fmt::format("an expert has {} tokens, more than the step's {}", c, s.tokens()));
      }
      sum += c;
    }
    if (sum != picks) {
      throw fail(l, fmt::format("expert counts sum to {}, expected tokens x top_k = {}", sum, picks));
    }
    if (h.origin_gpus() > 0) {
      if (static_cast<std::uint64_t>(layer.origin_expert_tokens_size()) !=
          static_cast<std::uint64_t>(h.origin_gpus()) * h.experts()) {
        throw fail(l, fmt::format("has {} origin x expert counts, expected {} x {}", layer.origin_expert_tokens_size(),
                                  h.origin_gpus(), h.experts()));
      }
      for (std::uint32_t e = 0; e < h.experts(); ++e) {
        std::uint64_t col = 0;
        for (std::uint32_t o = 0; o < h.origin_gpus(); ++o) {
          col += layer.origin_expert_tokens(static_cast<int>(o * h.experts() + e));
        }
        if (col != layer.expert_tokens(static_cast<int>(e))) {
          throw fail(l, fmt::format("expert {}: origin counts sum to {}, expert count is {}", e, col,
                                    layer.expert_tokens(static_cast<int>(e))));
        }
      }
    }
    if (h.has_token_experts()) {
      if (static_cast<std::uint64_t>(layer.token_experts_size()) != picks) {
        throw fail(
            l, fmt::format("has {} token expert ids, expected tokens x top_k = {}", layer.token_experts_size(), picks));
      }
      id_counts.assign(h.experts(), 0);
      for (const std::uint32_t id : layer.token_experts()) {
        if (id >= h.experts()) {
          throw fail(l, fmt::format("expert id {} out of range [0, {})", id, h.experts()));
        }
        ++id_counts[id];
      }
      for (std::uint32_t e = 0; e < h.experts(); ++e) {
        if (id_counts[e] != layer.expert_tokens(static_cast<int>(e))) {
          throw fail(l, fmt::format("expert {}: {} token ids, expert count is {}", e, id_counts[e],
                                    layer.expert_tokens(static_cast<int>(e))));
        }
      }
    }
  }
}

TraceWriter::TraceWriter(std::filesystem::path path, const trace::Header& header)
    : path_(std::move(path)), header_(header) {
  if (header_.version() == 0) {
    header_.set_version(1);
  }
  if (header_.moe_layers() == 0 || header_.experts() == 0 || header_.top_k() == 0 ||
      header_.top_k() > header_.experts()) {
    throw core::Error(path_.string() + ": trace header needs moe_layers, experts and 1 <= top_k <= experts");
  }
  if (header_.moe_layers() > k_max_trace_layers || header_.experts() > k_max_trace_experts) {
    throw core::Error(fmt::format("{}: a trace of {} MoE layers x {} experts; at most {} x {}", path_.string(),
                                  header_.moe_layers(), header_.experts(), k_max_trace_layers, k_max_trace_experts));
  }
  core::check_output_file(path_);
  tmp_ = path_;
  tmp_ += ".tmp-" + std::to_string(::getpid());
  core::install_signal_cleanup();
  on_signal_ = std::make_unique<core::SignalCleanup>(tmp_, core::SignalCleanup::Kind::file);
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    throw core::Error("cannot write " + tmp_.string());
  }
  out_.write(k_trace_magic, 8);
  header_.SerializeToString(&buffer_);
  put_varint(out_, buffer_.size());
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
}

TraceWriter::~TraceWriter() {
  if (!closed_) {
    out_.close();
    std::error_code ignored;
    std::filesystem::remove(tmp_, ignored);
  }
}

void TraceWriter::write(const trace::Step& step) {
  validate_step(header_, step, path_.string());
  step.SerializeToString(&buffer_);
  put_varint(out_, buffer_.size());
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  ++steps_;
}

void TraceWriter::close() {
  out_.flush();
  if (!out_) {
    throw core::Error("failed writing " + tmp_.string());
  }
  out_.close();
  core::sync_file(tmp_);
  core::check_output_file(path_);  // again: it may have become a link or a device meanwhile
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) {
    throw core::Error("cannot rename " + tmp_.string() + " to " + path_.string() + ": " + ec.message());
  }
  closed_ = true;
  core::sync_directory(path_.parent_path().empty() ? std::filesystem::path(".") : path_.parent_path());
}

TraceReader::TraceReader(std::filesystem::path path) : path_(std::move(path)) {
  open();
}
TraceReader::~TraceReader() = default;

void TraceReader::open() {
  in_.close();
  in_.clear();
  in_.open(path_, std::ios::binary);
  if (!in_) {
    throw core::Error(path_.string() + ": cannot open the routing trace");
  }
  std::error_code size_ec;
  file_bytes_ = std::filesystem::file_size(path_, size_ec);
  if (size_ec) {
    file_bytes_ = 0;  // not a regular file (a pipe): no bound from its size
  }
  char magic[8] = {};
  in_.read(magic, 8);
  if (in_.gcount() != 8 || std::string_view(magic, 8) != std::string_view(k_trace_magic, 8)) {
    throw core::Error(path_.string() + ": not an epsim routing trace (missing the EPSIMRT1 signature)");
  }
  if (!read_message(header_, false)) {
    throw core::Error(path_.string() + ": the trace header is missing");
  }
  if (header_.version() != 1) {
    throw core::Error(
        fmt::format("{}: trace format version {} is not supported (expected 1)", path_.string(), header_.version()));
  }
  if (header_.moe_layers() == 0 || header_.experts() == 0 || header_.top_k() == 0 ||
      header_.top_k() > header_.experts()) {
    throw core::Error(path_.string() + ": the trace header needs moe_layers, experts and 1 <= top_k <= experts");
  }
  if (header_.moe_layers() > k_max_trace_layers || header_.experts() > k_max_trace_experts) {
    throw core::Error(
        fmt::format("{}: the trace header claims {} MoE layers x {} experts; expected at most {} x {} "
                    "(a corrupt header?)",
                    path_.string(), header_.moe_layers(), header_.experts(), k_max_trace_layers, k_max_trace_experts));
  }
  steps_read_ = 0;
}

void TraceReader::rewind() {
  open();
}

bool TraceReader::read_message(google::protobuf::MessageLite& msg, bool eof_ok) {
  std::uint64_t size = 0;
  int shift = 0;
  for (int i = 0;; ++i) {
    const int c = in_.get();
    if (c == std::char_traits<char>::eof()) {
      if (i == 0 && eof_ok) {
        return false;
      }
      throw core::Error(
          fmt::format("{}: step {}: the file ends inside a message size (truncated)", path_.string(), steps_read_));
    }
    size |= static_cast<std::uint64_t>(c & 0x7F) << shift;
    shift += 7;
    if ((c & 0x80) == 0) {
      break;
    }
    if (shift > 63) {
      throw core::Error(fmt::format("{}: step {}: corrupt message size", path_.string(), steps_read_));
    }
  }
  // Check the claimed size against the bytes left before allocating for it: a corrupt size of a few
  // bytes must not reserve gigabytes.
  const std::streamoff at = in_.tellg();
  if (file_bytes_ > 0 && at >= 0 && size > file_bytes_ - static_cast<std::uint64_t>(at)) {
    throw core::Error(
        fmt::format("{}: step {}: a {}-byte message at byte {} but only {} bytes are left (corrupt or "
                    "truncated trace)",
                    path_.string(), steps_read_, size, at, file_bytes_ - static_cast<std::uint64_t>(at)));
  }
  buffer_.resize(size);
  in_.read(buffer_.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uint64_t>(in_.gcount()) != size) {
    throw core::Error(fmt::format("{}: step {}: the file ends {} bytes into a {}-byte message (truncated)",
                                  path_.string(), steps_read_, in_.gcount(), size));
  }
  if (!msg.ParseFromString(buffer_)) {
    throw core::Error(
        fmt::format("{}: step {}: the message does not parse (corrupt trace)", path_.string(), steps_read_));
  }
  return true;
}

bool TraceReader::next(trace::Step& step) {
  if (!read_message(step, true)) {
    return false;
  }
  validate_step(header_, step, path_.string(), id_counts_);
  ++steps_read_;
  return true;
}

}  // namespace epsim::workloads
