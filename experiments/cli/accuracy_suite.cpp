// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/accuracy_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "core/csv_lines.hpp"
#include "core/embedded_file.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"
#include "core/message_text.hpp"
#include "experiments/assembly/experiment_config.hpp"

namespace epsim::experiments {

std::span<const core::EmbeddedFile> embedded_accuracy_suite();

namespace {

constexpr std::string_view k_embedded_points = "accuracy/points/";
constexpr std::size_t k_max_list_entries = 256;
constexpr std::size_t k_max_text = 4096;

template <typename E, std::size_t N>
bool parse_enum(std::string_view text, const std::array<std::pair<std::string_view, E>, N>& names, E& out) {
  for (const auto& [name, value] : names) {
    if (name == text) {
      out = value;
      return true;
    }
  }
  return false;
}

template <typename E, std::size_t N>
std::string enum_names(const std::array<std::pair<std::string_view, E>, N>& names) {
  std::string out;
  for (const auto& [name, value] : names) {
    out += (out.empty() ? "" : ", ") + std::string(name);
  }
  return out;
}

constexpr std::array<std::pair<std::string_view, PointPhase>, 6> k_phases{{{"prefill", PointPhase::prefill},
                                                                           {"decode", PointPhase::decode},
                                                                           {"mixed", PointPhase::mixed},
                                                                           {"kernel", PointPhase::kernel},
                                                                           {"collective", PointPhase::collective},
                                                                           {"exchange", PointPhase::exchange}}};
constexpr std::array<std::pair<std::string_view, Sample>, 2> k_samples{{{"in", Sample::in}, {"out", Sample::out}}};
constexpr std::array<std::pair<std::string_view, Measure>, 5> k_measures{{{"step_throughput", Measure::step_throughput},
                                                                          {"step_ms", Measure::step_ms},
                                                                          {"metric", Measure::metric},
                                                                          {"cost", Measure::cost},
                                                                          {"profile", Measure::profile}}};
constexpr std::array<std::pair<std::string_view, StepTokens>, 4> k_tokens{{{"prefill", StepTokens::prefill},
                                                                           {"decode", StepTokens::decode},
                                                                           {"input", StepTokens::input},
                                                                           {"output", StepTokens::output}}};
constexpr std::array<std::pair<std::string_view, PerUnit>, 2> k_per{{{"node", PerUnit::node}, {"gpu", PerUnit::gpu}}};
constexpr std::array<std::pair<std::string_view, Quantity>, 7> k_quantities{{{"kernel", Quantity::kernel},
                                                                             {"collective", Quantity::collective},
                                                                             {"throughput", Quantity::throughput},
                                                                             {"tpot", Quantity::tpot},
                                                                             {"ttft", Quantity::ttft},
                                                                             {"step_time", Quantity::step_time},
                                                                             {"other", Quantity::other}}};

// Reads one table's keys, refusing any it does not know, naming the file and the key.
class Keys {
 public:
  Keys(const toml::table& t, std::string file, std::string section)
      : t_(t), file_(std::move(file)), section_(std::move(section)) {}

  [[noreturn]] void fail(std::string_view key, const std::string& what) const {
    throw core::ConfigError(file_, section_.empty() ? std::string(key) : section_ + "." + std::string(key), what);
  }
  const toml::node* node(std::string_view key) {
    used_.insert(std::string(key));
    return t_.get(key);
  }
  std::string text(std::string_view key, bool required) {
    const toml::node* n = node(key);
    if (n == nullptr) {
      if (required) {
        fail(key, "missing: expected a string");
      }
      return {};
    }
    const auto* s = n->as_string();
    if (s == nullptr) {
      fail(key, "expected a string");
    }
    if (s->get().size() > k_max_text) {
      fail(key, fmt::format("longer than {} characters", k_max_text));
    }
    return s->get();
  }
  std::vector<std::string> texts(std::string_view key) {
    std::vector<std::string> out;
    const toml::node* n = node(key);
    if (n == nullptr) {
      return out;
    }
    const auto* a = n->as_array();
    if (a == nullptr) {
      fail(key, "expected an array of strings");
    }
    if (a->size() > k_max_list_entries) {
      fail(key, fmt::format("more than {} entries", k_max_list_entries));
    }
    for (const toml::node& e : *a) {
      const auto* s = e.as_string();
      if (s == nullptr || s->get().size() > k_max_text) {
        fail(key, fmt::format("expected an array of strings of at most {} characters", k_max_text));
      }
      out.push_back(s->get());
    }
    return out;
  }
  double number(std::string_view key) {
    const toml::node* n = node(key);
    if (n == nullptr || !(n->is_floating_point() || n->is_integer())) {
      fail(key, "missing or not a number: expected the published value");
    }
    const double v = n->value<double>().value_or(0.0);
    if (!std::isfinite(v) || v <= 0.0 || v > 1e15) {
      fail(key, "expected a positive finite number (at most 1e15)");
    }
    return v;
  }
  std::int64_t whole(std::string_view key, std::int64_t fallback) {
    const toml::node* n = node(key);
    if (n == nullptr) {
      return fallback;
    }
    if (!n->is_integer() || n->value<std::int64_t>().value_or(-1) < 0) {
      fail(key, "expected a whole number >= 0");
    }
    return n->value<std::int64_t>().value_or(0);
  }
  bool flag(std::string_view key) {
    const toml::node* n = node(key);
    if (n == nullptr) {
      return false;
    }
    if (!n->is_boolean()) {
      fail(key, "expected true or false");
    }
    return n->value<bool>().value_or(false);
  }
  // A required choice among `names`.
  template <typename E, std::size_t N>
  E choice(std::string_view key, const std::array<std::pair<std::string_view, E>, N>& names) {
    return choice_or(key, names, static_cast<const E*>(nullptr));
  }
  // An optional one (`fallback` when absent; null = required).
  template <typename E, std::size_t N>
  E choice_or(std::string_view key, const std::array<std::pair<std::string_view, E>, N>& names, const E* fallback) {
    const toml::node* n = node(key);
    if (n == nullptr && fallback != nullptr) {
      return *fallback;
    }
    const std::string v = n != nullptr && n->is_string() ? n->value<std::string>().value_or("") : std::string();
    E out{};
    if (!parse_enum(v, names, out)) {
      fail(key, fmt::format("{}expected one of: {}",
                            n == nullptr ? "missing: " : fmt::format("\"{}\": ", core::terminal_safe(core::excerpt(v))),
                            enum_names(names)));
    }
    return out;
  }
  // Call after reading: a key nobody read is a typo or a key of another measure.
  void no_others(std::string_view hint) const {
    for (const auto& [k, v] : t_) {
      if (used_.count(std::string(k.str())) == 0) {
        fail(k.str(), fmt::format("unknown key{}", hint.empty() ? "" : fmt::format(" ({})", hint)));
      }
    }
  }

 private:
  const toml::table& t_;
  std::string file_;
  std::string section_;
  std::set<std::string> used_;
};

Quantity quantity_of_metric(std::string_view metric) {
  if (metric.starts_with("ttft")) {
    return Quantity::ttft;
  }
  if (metric.starts_with("tpot") || metric.starts_with("itl")) {
    return Quantity::tpot;
  }
  if (metric.find("tokens_per_s") != std::string_view::npos || metric.find("throughput") != std::string_view::npos) {
    return Quantity::throughput;
  }
  return Quantity::other;
}

FigureSpec parse_figure(const toml::table& t, const std::string& file, std::size_t index, const SuiteFiles& files) {
  Keys k(t, file, fmt::format("figure[{}]", index));
  FigureSpec f;
  f.name = k.text("name", true);
  if (f.name.empty() || core::has_control_characters(f.name) || f.name.find(',') != std::string::npos) {
    k.fail("name", "expected a name without commas or control characters");
  }
  f.sample = k.choice("sample", k_samples);
  f.where = k.text("where", false);
  f.measure = k.choice("measure", k_measures);
  if (f.measure != Measure::profile) {
    f.published = k.number("published");
  } else if (k.node("published") != nullptr) {
    k.fail("published", "a profile figure's rows carry their own published values (the table's latency_us)");
  }
  switch (f.measure) {
    case Measure::step_throughput:
    case Measure::step_ms: {
      constexpr StepTokens prefill = StepTokens::prefill;
      constexpr PerUnit node = PerUnit::node;
      f.tokens = k.choice_or("tokens", k_tokens, &prefill);
      f.per = k.choice_or("per", k_per, &node);
      f.per_layer = k.flag("per_layer");
      f.per_output_token = k.flag("per_output_token");
      f.filter.min_prefill_tokens = k.whole("min_prefill_tokens", 0);
      f.filter.max_prefill_tokens = k.whole("max_prefill_tokens", f.filter.max_prefill_tokens);
      f.filter.min_decode_tokens = k.whole("min_decode_tokens", 0);
      f.filter.max_decode_tokens = k.whole("max_decode_tokens", f.filter.max_decode_tokens);
      f.quantity = f.measure == Measure::step_ms ? Quantity::step_time : Quantity::throughput;
      break;
    }
    case Measure::metric:
      f.metric = k.text("metric", true);
      f.quantity = quantity_of_metric(f.metric);
      break;
    case Measure::cost: {
      f.args = k.texts("args");
      if (f.args.empty()) {
        k.fail("args", "expected the arguments of `epsim cost` (e.g. [\"--op\", \"dense_gemm\", ...])");
      }
      const bool collective = std::find(f.args.begin(), f.args.end(), "--collective") != f.args.end();
      f.quantity = collective ? Quantity::collective : Quantity::kernel;
      break;
    }
    case Measure::profile:
      f.table = files.resolve(file, k.text("table", true));
      for (const std::string& op : k.texts("ops")) {
        calibration::MeasuredOp m{};
        if (!calibration::parse_op(op, m)) {
          k.fail("ops", fmt::format("unknown op \"{}\"", core::terminal_safe(core::excerpt(op))));
        }
        f.ops.push_back(m);
      }
      f.quantity = Quantity::kernel;  // per row: collectives rows are collectives (accuracy_figures.cpp)
      break;
  }
  // What the figure stands for, when the measure's default is not it (a decode step's time is its TPOT).
  const Quantity inferred = f.quantity;
  f.quantity = k.choice_or("quantity", k_quantities, &inferred);
  k.no_others("valid keys depend on `measure`: see accuracy/README.md");
  return f;
}

std::string stem_of(const std::string& file) {
  return std::filesystem::path(file).stem().string();
}

}  // namespace

std::string_view phase_name(PointPhase p) {
  for (const auto& [name, value] : k_phases) {
    if (value == p) {
      return name;
    }
  }
  return "?";
}

std::string_view sample_name(Sample s) {
  return s == Sample::in ? "in" : "out";
}

std::string_view quantity_name(Quantity q) {
  switch (q) {
    case Quantity::kernel:
      return "kernel";
    case Quantity::collective:
      return "collective";
    case Quantity::throughput:
      return "throughput";
    case Quantity::tpot:
      return "TPOT";
    case Quantity::ttft:
      return "TTFT";
    case Quantity::step_time:
      return "step time";
    case Quantity::other:
      return "other";
  }
  return "?";
}

double target_pct(Quantity q) {
  switch (q) {
    case Quantity::kernel:
      return 10.0;
    case Quantity::ttft:
      return 25.0;
    case Quantity::collective:
    case Quantity::throughput:
    case Quantity::tpot:
    case Quantity::step_time:
    case Quantity::other:
      return 15.0;
  }
  return 15.0;
}

SuiteFiles SuiteFiles::embedded() {
  SuiteFiles s;
  s.embedded_ = true;
  s.label_ = "the embedded suite (accuracy/)";
  return s;
}

SuiteFiles SuiteFiles::on_disk(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw core::Error(fmt::format("{}: no such suite folder or point file", path.string()));
  }
  SuiteFiles s;
  s.root_ = path;
  s.label_ = path.string();
  return s;
}

std::vector<std::string> SuiteFiles::point_files() const {
  std::vector<std::string> out;
  if (embedded_) {
    for (const core::EmbeddedFile& f : embedded_accuracy_suite()) {
      if (f.name.starts_with(k_embedded_points) && f.name.ends_with(".toml") &&
          f.name.find('/', k_embedded_points.size()) == std::string_view::npos) {
        out.emplace_back(f.name);
      }
    }
  } else if (std::filesystem::is_directory(root_)) {
    const std::filesystem::path dir =
        std::filesystem::is_directory(root_ / "points") ? root_ / "points" : std::filesystem::path(root_);
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".toml" && e.is_regular_file()) {
        out.push_back(e.path().string());
        if (out.size() > k_max_points) {
          throw core::Error(fmt::format("{}: more than {} point files", dir.string(), k_max_points));
        }
      }
    }
    if (out.empty()) {
      throw core::Error(fmt::format("{}: no point files (*.toml) in it", dir.string()));
    }
  } else {
    out.push_back(root_.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string SuiteFiles::read(const std::string& file) const {
  if (embedded_) {
    for (const core::EmbeddedFile& f : embedded_accuracy_suite()) {
      if (f.name == file) {
        return std::string(f.content);
      }
    }
    throw core::Error(
        fmt::format("{}: not in the embedded suite (its points may name files under accuracy/, "
                    "examples/deployments/ and data/profiles/ only)",
                    file));
  }
  core::check_input_file(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw core::Error(fmt::format("{}: cannot open", file));
  }
  return core::read_whole_input(in, file);
}

std::string SuiteFiles::resolve(const std::string& from_file, const std::string& relative) const {
  const std::filesystem::path p = std::filesystem::path(from_file).parent_path() / relative;
  return p.lexically_normal().generic_string();
}

PointSpec parse_point(std::string_view text, const std::string& file, const SuiteFiles& files) {
  const toml::table doc = parse_config_text(text, file);
  for (const auto& [k, v] : doc) {
    if (k.str() != "point" && k.str() != "figure") {
      throw core::ConfigError(file, std::string(k.str()), "unknown section: a point file has [point] and [[figure]]");
    }
  }
  const toml::table* pt = doc["point"].as_table();
  if (pt == nullptr) {
    throw core::ConfigError(file, "point", "missing: expected a [point] table (title, gpu, phase, source, ...)");
  }
  Keys k(*pt, file, "point");
  PointSpec p;
  p.file = file;
  p.name = stem_of(file);
  p.title = k.text("title", true);
  p.gpu = k.text("gpu", true);
  if (p.gpu.empty() || p.gpu.find(',') != std::string::npos || core::has_control_characters(p.gpu)) {
    k.fail("gpu", "expected a GPU label without commas or control characters");
  }
  p.phase = k.choice("phase", k_phases);
  p.quick = k.flag("quick");
  p.source = k.text("source", true);
  p.unstated = k.texts("unstated");
  p.fitted = k.texts("fitted");
  p.preset = k.text("preset", false);
  p.cluster = k.text("cluster", false);
  const std::string config = k.text("config", false);
  if (!config.empty()) {
    p.config = files.resolve(file, config);
  }
  if (const toml::node* s = k.node("set")) {
    if (!s->is_table()) {
      k.fail("set", "expected a table of config overrides ([point.set])");
    }
    if (config.empty()) {
      k.fail("set", "overrides without a `config` to apply them to");
    }
    p.set = *s->as_table();
  }
  k.no_others("valid: title, gpu, phase, quick, source, unstated, fitted, preset, cluster, config, set");

  const toml::array* figs = doc["figure"].as_array();
  if (figs == nullptr || figs->empty()) {
    throw core::ConfigError(file, "figure", "missing: expected [[figure]] tables (name, published, sample, measure)");
  }
  if (figs->size() > k_max_figures_per_point) {
    throw core::ConfigError(file, "figure", fmt::format("more than {} figures", k_max_figures_per_point));
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < figs->size(); ++i) {
    const toml::table* ft = (*figs)[i].as_table();
    if (ft == nullptr) {
      throw core::ConfigError(file, fmt::format("figure[{}]", i), "expected a table");
    }
    FigureSpec f = parse_figure(*ft, file, i, files);
    const bool run_measure =
        f.measure == Measure::step_throughput || f.measure == Measure::step_ms || f.measure == Measure::metric;
    if (run_measure && !p.runs()) {
      throw core::ConfigError(file, fmt::format("figure[{}].measure", i),
                              "a run's figure needs the point's `config` (the setup to run)");
    }
    if (f.measure == Measure::profile && p.preset.empty() && p.cluster.empty()) {
      throw core::ConfigError(file, fmt::format("figure[{}].measure", i),
                              "a profile figure needs [point] `preset` (GPU preset) or `cluster` (cluster preset)");
    }
    if (!names.insert(f.name).second) {
      throw core::ConfigError(file, fmt::format("figure[{}].name", i),
                              fmt::format("\"{}\" is already a figure of this point", f.name));
    }
    p.figures.push_back(std::move(f));
  }
  return p;
}

std::vector<PointSpec> read_suite(const SuiteFiles& files) {
  std::vector<PointSpec> out;
  for (const std::string& f : files.point_files()) {
    out.push_back(parse_point(files.read(f), f, files));
  }
  if (out.size() > k_max_points) {
    throw core::Error(fmt::format("{}: more than {} points", files.label(), k_max_points));
  }
  return out;
}

}  // namespace epsim::experiments
