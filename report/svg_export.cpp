// SPDX-License-Identifier: Apache-2.0
#include "report/svg_export.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/error.hpp"
#include "report/vega_runtime.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere else

namespace epsim::report {
namespace {

// Runs Vega in a fresh vm context (the UMD files must not see Node's own module system), renders each
// spec with the headless renderer and prints {"index", "svg"} per line.
std::string node_script(const std::vector<nlohmann::json>& specs) {
  std::string s = "const vm = require('vm');\nconst ctx = vm.createContext({console: console});\n";
  s += "vm.runInContext(" + nlohmann::json(vega_runtime_js()).dump() + ", ctx);\n";
  s += "const vega = vm.runInContext('__epsimVega()', ctx);\n";
  s += "const specs = " + nlohmann::json(specs).dump() + ";\n";
  s += R"js(
(async () => {
  for (let i = 0; i < specs.length; ++i) {
    const view = new vega.View(vega.parse(specs[i]), {renderer: 'none'});
    const svg = await view.toSVG();
    view.finalize();
    process.stdout.write(JSON.stringify({index: i, svg: svg}) + '\n');
  }
})().catch(e => { process.stderr.write('figure: ' + ((e && e.stack) || e) + '\n'); process.exit(3); });
)js";
  return s;
}

class Pipe {
 public:
  Pipe() {
    if (pipe2(fd_.data(), O_CLOEXEC) != 0) {
      throw core::Error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
    }
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  Pipe(Pipe&&) = delete;
  Pipe& operator=(Pipe&&) = delete;
  int read_end() const { return fd_[0]; }
  int write_end() const { return fd_[1]; }
  void close_read() { close_fd(fd_[0]); }
  void close_write() { close_fd(fd_[1]); }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  }
  std::array<int, 2> fd_{-1, -1};
};

struct Output {
  std::string out;
  std::string err;
  int status = 0;
};

// Runs `program -` with `input` on stdin, collecting stdout and stderr; poll() keeps all three pipes
// moving so neither side can block the other. A program still running after `limit_s` (a hung Node.js)
// is killed, and that is an error.
Output run_with_input(const std::string& program, const std::string& input, double limit_s) {
  // A child that dies early must surface as EPIPE on write, not kill epsim with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  Pipe in;
  Pipe out;
  Pipe err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read_end(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write_end(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write_end(), STDERR_FILENO);
  std::string arg0 = program;
  std::string arg1 = "-";
  std::array<char*, 3> argv{arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw core::Error(fmt::format(
        "cannot run \"{}\" ({}): each figure's SVG is drawn by Vega under Node.js; install it (Debian: apt install "
        "nodejs), point EPSIM_NODE at it, or pass --no-svg",
        program, std::strerror(rc)));
  }
  in.close_read();
  out.close_write();
  err.close_write();
  fcntl(in.write_end(), F_SETFL, O_NONBLOCK);
  Output result;
  std::size_t written = 0;
  bool out_open = true;
  bool err_open = true;
  std::array<char, 65536> buf{};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (out_open || err_open) {
    const auto left_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left_ms <= 0) {
      ::kill(pid, SIGKILL);
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      throw core::Error(fmt::format(
          "drawing the SVGs with {}: no answer within {:g} s, so it was stopped (set EPSIM_NODE_TIMEOUT_S for more "
          "time, or pass --no-svg)",
          program, limit_s));
    }
    std::array<pollfd, 3> fds{{{in.write_end(), POLLOUT, 0}, {out.read_end(), POLLIN, 0}, {err.read_end(), POLLIN, 0}}};
    if (poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left_ms, 1000))) < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    if (in.write_end() >= 0 && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      const ssize_t n = ::write(in.write_end(), input.data() + written, input.size() - written);
      if (n > 0) {
        written += static_cast<std::size_t>(n);
      }
      if (written == input.size() || (n < 0 && errno != EAGAIN)) {
        in.close_write();
      }
    }
    const auto drain = [&](const pollfd& p, int fd, std::string& into, bool& open) {
      if (open && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n > 0) {
          into.append(buf.data(), static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          open = false;
        }
      }
    };
    drain(fds[1], out.read_end(), result.out, out_open);
    drain(fds[2], err.read_end(), result.err, err_open);
  }
  in.close_write();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = status;
  return result;
}

}  // namespace

std::string node_program() {
  const char* env = std::getenv("EPSIM_NODE");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("node");
}

double node_timeout_s() {
  const char* env = std::getenv("EPSIM_NODE_TIMEOUT_S");
  if (env == nullptr || *env == '\0') {
    return k_default_node_timeout_s;
  }
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(v > 0.0) || v > 86400.0) {
    throw core::Error(fmt::format("EPSIM_NODE_TIMEOUT_S={}: expected seconds in (0, 86400]", env));
  }
  return v;
}

bool program_available(const std::string& node) {
  if (node.find('/') != std::string::npos) {
    return ::access(node.c_str(), X_OK) == 0;
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    dir += '/';
    dir += node;
    if (dir.size() > node.size() + 1 && ::access(dir.c_str(), X_OK) == 0) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> render_svgs(const std::vector<nlohmann::json>& specs, const std::string& node) {
  std::vector<std::string> svgs(specs.size());
  if (specs.empty()) {
    return svgs;
  }
  const Output o = run_with_input(node, node_script(specs), node_timeout_s());
  const bool ok = WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0;
  if (!ok) {
    const std::string why = WIFEXITED(o.status) ? fmt::format("exit code {}", WEXITSTATUS(o.status))
                                                : fmt::format("signal {}", WTERMSIG(o.status));
    throw core::Error(fmt::format("drawing the SVGs with {} failed ({}): {}", node, why,
                                  o.err.empty() ? std::string("no message") : o.err.substr(0, 2000)));
  }
  std::istringstream lines(o.out);
  std::string line;
  std::size_t got = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("index") || !j.contains("svg")) {
      throw core::Error(
          fmt::format("drawing the SVGs with {}: unexpected output line \"{}\"", node, line.substr(0, 200)));
    }
    const auto i = j["index"].get<std::size_t>();
    if (i < svgs.size()) {
      svgs[i] = j["svg"].get<std::string>();
      ++got;
    }
  }
  if (got != specs.size()) {
    throw core::Error(fmt::format("drawing the SVGs with {}: {} of {} figures came back", node, got, specs.size()));
  }
  return svgs;
}

}  // namespace epsim::report
