// SPDX-License-Identifier: Apache-2.0
// _epsim: the C++ half of the Python package epsim (python/epsim/), on the CLI's in-process functions:
// a run is run_experiment (what `epsim run` calls), a command is run_cli (what `epsim` calls), so the
// numbers, files and messages are the CLI's. The GIL is released while C++ works, so other Python
// threads run meanwhile. The package turns what comes back into Python objects (docs/python.md).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/message_text.hpp"
#include "core/signal_cleanup.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "experiments/cli/cli.hpp"
#include "experiments/cli/command_line.hpp"
#include "experiments/cli/run_command.hpp"
#include "python/config_handle.hpp"
#include "version.hpp"

namespace py = pybind11;

namespace epsim::python {
namespace {

// The seed as `epsim run --seed` takes it: a whole number in [0, 2^63 - 1], else ValueError.
std::uint64_t seed_of(const py::int_& seed) {
  return static_cast<std::uint64_t>(
      experiments::whole_number_option(std::string(py::str(py::handle(seed))), "seed", 0, INT64_MAX));
}

// One `epsim run`: results written to `out` (staged, swapped in whole) or returned in memory.
py::dict run(const ConfigHandle& config, const std::optional<py::int_>& seed,
             const std::optional<std::filesystem::path>& out, bool report) {
  experiments::ExperimentConfig cfg = config.config();
  if (seed) {
    cfg.seed = seed_of(*seed);
  }
  experiments::ExperimentRun r;
  std::string text;
  {
    const py::gil_scoped_release release;
    // Ctrl-C: Python's handler has set a flag; checked ~10 times a second (the GIL taken only then),
    // it ends the run as KeyboardInterrupt, nothing written.
    const auto poll = [] {
      const py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) {
        throw py::error_already_set();
      }
    };
    r = experiments::run_experiment(cfg, experiments::RunRequest{out, report, nullptr, poll});
    text = experiments::human_summary(cfg, r.result);
  }
  py::list files;
  for (const auto& [name, content] : r.files) {
    files.append(py::make_tuple(name, py::bytes(content)));
  }
  py::dict d;
  d["files"] = files;
  d["warnings"] = r.warnings;
  d["wall_s"] = r.wall_s;
  d["text"] = text;
  d["report_file"] = report ? py::cast(r.report_file) : py::none();
  return d;
}

// One `epsim ARGS...` in this process: (exit code, standard output, standard error).
py::tuple cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  int rc = 0;
  {
    const py::gil_scoped_release release;
    rc = experiments::run_cli(args, out, err);
  }
  return py::make_tuple(rc, py::bytes(out.str()), py::bytes(err.str()));
}

std::string validate(const ConfigHandle& config) {
  const py::gil_scoped_release release;
  return experiments::validate_experiment(config.config());
}

}  // namespace
}  // namespace epsim::python

PYBIND11_MODULE(_epsim, m) {
  using epsim::python::ConfigHandle;
  m.doc() = "epsim's C++ half: runs, commands and configurations (use the package epsim)";
  // Python owns SIGINT (KeyboardInterrupt; a notebook interrupts its kernel with it) and SIGTERM.
  epsim::core::keep_host_signal_handlers();
  epsim::experiments::use_stderr_logger();
  epsim::experiments::set_log_level("warn");

  // epsim.Error (RuntimeError) for failures, ConfigError and UsageError (also ValueError) for bad input;
  // messages are the CLI's, control characters shown as the CLI shows them.
  static PyObject* error = PyErr_NewException("epsim.Error", PyExc_RuntimeError, nullptr);
  static PyObject* config_error = PyErr_NewException(
      "epsim.ConfigError", py::make_tuple(py::handle(error), py::handle(PyExc_ValueError)).release().ptr(), nullptr);
  static PyObject* usage_error = PyErr_NewException(
      "epsim.UsageError", py::make_tuple(py::handle(error), py::handle(PyExc_ValueError)).release().ptr(), nullptr);
  m.add_object("Error", py::handle(error));
  m.add_object("ConfigError", py::handle(config_error));
  m.add_object("UsageError", py::handle(usage_error));
  // NOLINTNEXTLINE(performance-unnecessary-value-param): pybind11's translator type takes it by value
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const epsim::core::ConfigError& e) {
      PyErr_SetString(config_error, epsim::core::terminal_safe(e.what()).c_str());
    } catch (const epsim::experiments::UsageError& e) {
      PyErr_SetString(usage_error, epsim::core::terminal_safe(e.what()).c_str());
    } catch (const epsim::core::Error& e) {
      PyErr_SetString(error, epsim::core::terminal_safe(e.what()).c_str());
    }
  });

  py::class_<ConfigHandle>(m, "Config")
      .def_static("file", &ConfigHandle::file, py::arg("path"), py::arg("sets"))
      .def_static("text", &ConfigHandle::text, py::arg("text"), py::arg("source"), py::arg("sets"))
      .def_static("demo", &ConfigHandle::demo, py::arg("sets"))
      .def("with_sets", &ConfigHandle::with_sets, py::arg("sets"))
      .def_property_readonly("sets", &ConfigHandle::sets)
      .def_property_readonly("path", &ConfigHandle::path)
      .def_property_readonly("toml_text", &ConfigHandle::toml_text)
      .def_property_readonly("stem", &ConfigHandle::stem)
      .def_property_readonly("source", [](const ConfigHandle& c) { return c.config().source; })
      .def_property_readonly("seed", [](const ConfigHandle& c) { return c.config().seed; })
      .def_property_readonly("warnings", [](const ConfigHandle& c) { return c.config().warnings; })
      .def_property_readonly("echo_json", [](const ConfigHandle& c) { return c.config().echo_json; })
      .def("validate", &epsim::python::validate);

  m.def("run", &epsim::python::run, py::arg("config"), py::arg("seed"), py::arg("out"), py::arg("report"));
  m.def("cli", &epsim::python::cli, py::arg("args"));
  m.def(
      "set_log_level", [](const std::string& level) { epsim::experiments::set_log_level(level); }, py::arg("level"));
  m.attr("version") = epsim::experiments::k_version;
}
