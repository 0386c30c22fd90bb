// SPDX-License-Identifier: Apache-2.0
#include "models/hf_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"
#include "core/json_depth.hpp"
#include "models/hf_families.hpp"

namespace epsim::models {
namespace {

// nlohmann's message less its "[json.exception.parse_error.101] " tag: "parse error at line 3, column 1:
// syntax error while parsing object - unexpected end of input; expected '}'".
std::string parse_message(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (const std::size_t tag_end = what.find("] ");
      what.starts_with("[json.exception") && tag_end != std::string::npos) {
    what.erase(0, tag_end + 2);
  }
  return what;
}

std::string supported_architectures() {
  std::vector<std::string_view> names;
  for (const HfFamily& f : hf_families()) {
    names.push_back(f.architecture);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace

HfModelTable derive_hf_model(std::string_view json_text, const std::string& source, const std::string& name,
                             std::span<const std::string> accepted) {
  if (json_text.size() > k_max_hf_config_bytes) {
    throw core::Error(fmt::format("{}: {} bytes; a config.json is at most {} bytes", source, json_text.size(),
                                  k_max_hf_config_bytes));
  }
  core::check_json_depth(json_text, source);
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw core::Error(fmt::format("{}: invalid JSON at byte {}: {}", source, e.byte, parse_message(e)));
  } catch (const nlohmann::json::exception& e) {  // valid syntax it cannot hold: a number past double's range
    throw core::Error(fmt::format("{}: invalid JSON: {}", source, parse_message(e)));
  }
  if (!root.is_object()) {
    throw core::Error(
        fmt::format("{}: expected a JSON object (a Hugging Face config.json), got {}", source, root.type_name()));
  }
  HfFields fields(root, source, "");
  const std::vector<std::string> archs = fields.string_list("architectures");
  if (archs.empty()) {
    fields.fail("architectures", "missing; expected the model's architecture, e.g. [\"DeepseekV3ForCausalLM\"]");
  }
  const HfFamily* family = find_hf_family(archs.front());
  if (family == nullptr) {
    fields.fail("architectures", fmt::format("unknown architecture \"{}\"; epsim reads the config.json of: {}",
                                             archs.front(), supported_architectures()));
  }
  HfOut out;
  out.accepted = accepted;
  out.put("name", name);
  HfModelTable t;
  t.family = std::string(family->architecture);
  family->derive(fields, out, accepted, t.ignored);
  t.ignored.insert(t.ignored.end(), out.ignored.begin(), out.ignored.end());
  t.model = std::move(out.table);
  t.order = std::move(out.order);
  return t;
}

HfModelTable read_hf_config(const std::string& path, std::span<const std::string> accepted) {
  core::check_input_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(path + ": cannot read");
  }
  const std::string text = core::read_whole_input(in, path, k_max_hf_config_bytes);
  const std::filesystem::path p(path);
  const std::string name = p.filename() == "config.json" && p.has_parent_path() && !p.parent_path().filename().empty()
                               ? p.parent_path().filename().string()
                               : p.stem().string();
  return derive_hf_model(text, path, name, accepted);
}

std::string hf_model_toml(const HfModelTable& t) {
  std::ostringstream out;
  out << "[model]\n";
  for (const std::string& key : t.order) {
    const toml::node* v = t.model.get(key);
    if (v == nullptr) {
      continue;
    }
    out << key << " = ";
    if (const toml::array* a = v->as_array()) {
      // An inline array of strings (layer_types), wrapped at 100 columns.
      std::size_t width = key.size() + 4;
      out << "[";
      for (std::size_t i = 0; i < a->size(); ++i) {
        const std::string item = toml_string((*a)[i].value_or(std::string()));
        if (i > 0 && width + item.size() + 2 > 100) {
          out << ",\n ";
          width = 1;
        } else if (i > 0) {
          out << ", ";
        }
        out << item;
        width += item.size() + 2;
      }
      out << "]\n";
    } else if (const auto s = v->value<std::string>()) {
      out << toml_string(*s) << "\n";
    } else {
      v->visit([&](const auto& value) { out << value; });
      out << "\n";
    }
  }
  out << "# " << t.family << ": fields known not to change the cost (ignored):\n";
  std::size_t width = 1;
  out << "#";
  for (const std::string& f : t.ignored) {
    if (width + f.size() + 1 > 100) {
      out << "\n#";
      width = 1;
    }
    out << " " << f;
    width += f.size() + 1;
  }
  out << "\n";
  return out.str();
}

}  // namespace epsim::models
