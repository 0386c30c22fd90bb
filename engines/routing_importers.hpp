// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engines' routing recordings as a registry: format name -> the importer that streams it into steps, with
// one line saying what it reads (`epsim trace import --help` lists them), and the detection of a file's format
// from its name and first bytes. Adding a format is one entry here and its engines/import_<format>.{hpp,cpp}.
#include <filesystem>
#include <span>
#include <string_view>

#include "engines/recorded_routing.hpp"

namespace epsim::engines {

using RoutingImportFunction = ImportSummary (*)(const std::filesystem::path& path, const RoutingImportOptions& o,
                                                StepSink& sink);

struct RoutingImporter {
  std::string_view name;
  std::string_view description;
  RoutingImportFunction run;
};

std::span<const RoutingImporter> routing_importers();
/// The importer called `name`, or null.
const RoutingImporter* find_routing_importer(std::string_view name);
/// The format of `path`: an epsim trace (its magic), a TensorRT-LLM statistics directory (or its
/// meta_info.json), JSON Lines (vLLM), or JSON with "load_history" near its start; null when none fits.
const RoutingImporter* detect_routing_format(const std::filesystem::path& path);

/// EPLB load histories (engines/load_history.hpp), each entry one step. Rows may be MoE layers, or every
/// hidden layer of the model (SGLang's numbering; dense rows must then be zero and are left out).
ImportSummary import_eplb_load_history(const std::filesystem::path& path, const RoutingImportOptions& o,
                                       StepSink& sink);
/// An epsim trace, step by step (so every consumer of recordings also takes traces).
ImportSummary import_epsim_trace(const std::filesystem::path& path, const RoutingImportOptions& o, StepSink& sink);

}  // namespace epsim::engines
