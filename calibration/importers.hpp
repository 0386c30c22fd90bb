// SPDX-License-Identifier: Apache-2.0
#pragma once
// The importers' registry: format name -> the function that turns its files into a measurement table,
// with one line saying what it reads (`epsim calibrate import --help` lists them). Adding a format is one
// entry here and its calibration/import_<format>.{hpp,cpp}.
#include <filesystem>
#include <span>
#include <string_view>

#include "calibration/import_options.hpp"
#include "calibration/measurement_table.hpp"

namespace epsim::calibration {

using ImportFunction = MeasurementTable (*)(std::span<const std::filesystem::path> files, const ImportOptions& o);

struct Importer {
  std::string_view name;
  std::string_view description;
  ImportFunction run;
};

std::span<const Importer> importers();
/// The importer called `name`, or null.
const Importer* find_importer(std::string_view name);

}  // namespace epsim::calibration
