// SPDX-License-Identifier: Apache-2.0
#include "policies/grace/spectral_grouping.hpp"

#include <algorithm>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "core/random_streams.hpp"

namespace epsim::policies {

namespace {

using Index = Eigen::Index;

// Squared distance from row i of `points` to row c of `centres`.
double dist2(const Eigen::MatrixXd& points, Index i, const Eigen::MatrixXd& centres, Index c) {
  return (points.row(i) - centres.row(c)).squaredNorm();
}

// k-means++ seeding: the first centre uniformly, each next one with probability proportional to the
// squared distance to the nearest chosen centre (all zero: the lowest row not yet chosen).
Eigen::MatrixXd seed_centres(const Eigen::MatrixXd& points, int k, core::Rng& rng) {
  const Index n = points.rows();
  Eigen::MatrixXd centres(k, points.cols());
  std::vector<char> chosen(static_cast<std::size_t>(n), 0);
  const Index first = boost::random::uniform_int_distribution<Index>(0, n - 1)(rng);
  centres.row(0) = points.row(first);
  chosen[static_cast<std::size_t>(first)] = 1;
  std::vector<double> nearest(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    nearest[static_cast<std::size_t>(i)] = dist2(points, i, centres, 0);
  }
  for (int c = 1; c < k; ++c) {
    const double total = std::accumulate(nearest.begin(), nearest.end(), 0.0);
    Index pick = -1;
    if (total > 0.0) {
      const double x = boost::random::uniform_real_distribution<double>(0.0, total)(rng);
      double run = 0.0;
      for (Index i = 0; i < n; ++i) {
        run += nearest[static_cast<std::size_t>(i)];
        if (nearest[static_cast<std::size_t>(i)] > 0.0 && x < run) {
          pick = i;
          break;
        }
      }
      if (pick < 0) {  // rounding at the end of the scan: the last row with weight
        for (Index i = n - 1; i >= 0 && pick < 0; --i) {
          pick = nearest[static_cast<std::size_t>(i)] > 0.0 ? i : -1;
        }
      }
    } else {
      for (Index i = 0; i < n && pick < 0; ++i) {
        pick = chosen[static_cast<std::size_t>(i)] ? -1 : i;
      }
    }
    // kmeans() caps k at n, so some row is still unchosen; saying so also tells GCC's -O3 flow analysis
    // (-Wstringop-overflow) that `pick` is never -1 here.
    if (pick < 0) {
      throw core::Error("k-means seeding: no unchosen row left for centre " + std::to_string(c));
    }
    chosen[static_cast<std::size_t>(pick)] = 1;
    centres.row(c) = points.row(pick);
    for (Index i = 0; i < n; ++i) {
      nearest[static_cast<std::size_t>(i)] =
          std::min(nearest[static_cast<std::size_t>(i)], dist2(points, i, centres, c));
    }
  }
  return centres;
}

// Lloyd iterations from `centres`; writes labels, returns the inertia.
double lloyd(const Eigen::MatrixXd& points, Eigen::MatrixXd& centres, int max_iterations, std::vector<int>& labels) {
  const Index n = points.rows();
  const Index k = centres.rows();
  labels.assign(static_cast<std::size_t>(n), -1);
  double inertia = 0.0;
  for (int it = 0; it < max_iterations; ++it) {
    bool changed = false;
    inertia = 0.0;
    for (Index i = 0; i < n; ++i) {
      Index best = 0;
      double best_d = dist2(points, i, centres, 0);
      for (Index c = 1; c < k; ++c) {
        const double d = dist2(points, i, centres, c);
        if (d < best_d) {
          best = c;
          best_d = d;
        }
      }
      inertia += best_d;
      if (labels[static_cast<std::size_t>(i)] != static_cast<int>(best)) {
        labels[static_cast<std::size_t>(i)] = static_cast<int>(best);
        changed = true;
      }
    }
    if (!changed) {
      break;
    }
    // New centres: member means; an empty cluster keeps its centre.
    Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(k, points.cols());
    std::vector<int> count(static_cast<std::size_t>(k), 0);
    for (Index i = 0; i < n; ++i) {
      sum.row(labels[static_cast<std::size_t>(i)]) += points.row(i);
      ++count[static_cast<std::size_t>(labels[static_cast<std::size_t>(i)])];
    }
    for (Index c = 0; c < k; ++c) {
      if (count[static_cast<std::size_t>(c)] > 0) {
        centres.row(c) = sum.row(c) / count[static_cast<std::size_t>(c)];
      }
    }
  }
  return inertia;
}

// Renumbers labels by each cluster's smallest member.
std::vector<int> canonical_labels(const std::vector<int>& labels, int k) {
  std::vector<int> map(static_cast<std::size_t>(k), -1);
  int next = 0;
  std::vector<int> out(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    int& m = map[static_cast<std::size_t>(labels[i])];
    if (m < 0) {
      m = next++;
    }
    out[i] = m;
  }
  return out;
}

// Sum of A[e][j] over j in `group`.
double affinity_to(const Eigen::MatrixXd& a, int e, std::span<const int> group) {
  double s = 0.0;
  for (const int j : group) {
    s += a(e, j);
  }
  return s;
}

// IntraScore(L + {e}) = IntraScore(L) + 2 sum_j A[e][j] + A[e][e].
double score_with(const Eigen::MatrixXd& a, double group_score, int e, std::span<const int> group) {
  return group_score + 2.0 * affinity_to(a, e, group) + a(e, e);
}

void check_square(const Eigen::MatrixXd& a, const char* what) {
  if (a.rows() != a.cols()) {
    throw core::Error(std::string(what) + ": expected a square affinity matrix, got " + std::to_string(a.rows()) +
                      " x " + std::to_string(a.cols()));
  }
}

}  // namespace

std::vector<int> kmeans(const Eigen::MatrixXd& points, int k, const KMeansOptions& o) {
  if (k < 1 || o.restarts < 1 || o.max_iterations < 1) {
    throw core::Error("kmeans: expected k >= 1, restarts >= 1 and max_iterations >= 1");
  }
  if (points.rows() == 0) {
    return {};
  }
  const int centres = std::min<int>(k, static_cast<int>(points.rows()));
  core::Rng rng(o.seed);
  std::vector<int> best;
  std::vector<int> labels;
  double best_inertia = std::numeric_limits<double>::infinity();
  for (int run = 0; run < o.restarts; ++run) {
    Eigen::MatrixXd c = seed_centres(points, centres, rng);
    const double inertia = lloyd(points, c, o.max_iterations, labels);
    if (inertia < best_inertia) {
      best_inertia = inertia;
      best = labels;
    }
  }
  return canonical_labels(best, centres);
}

Groups spectral_clustering(const Eigen::MatrixXd& affinity, int k, const KMeansOptions& o) {
  check_square(affinity, "spectral clustering");
  if (k < 1) {
    throw core::Error("spectral clustering: expected k >= 1 groups, got " + std::to_string(k));
  }
  const auto n = static_cast<int>(affinity.rows());
  Groups groups(static_cast<std::size_t>(k));
  if (k >= n || k == 1) {
    for (int e = 0; e < n; ++e) {
      groups[static_cast<std::size_t>(k == 1 ? 0 : e)].push_back(e);
    }
    return groups;
  }
  const Eigen::VectorXd degree = affinity.rowwise().sum();
  const Eigen::VectorXd inv_sqrt = degree.unaryExpr([](double d) { return d > 0.0 ? 1.0 / std::sqrt(d) : 0.0; });
  const Eigen::MatrixXd laplacian =
      Eigen::MatrixXd::Identity(n, n) - inv_sqrt.asDiagonal() * affinity * inv_sqrt.asDiagonal();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(laplacian);
  if (solver.info() != Eigen::Success) {
    throw core::Error("spectral clustering: the eigen-solver did not converge");
  }
  Eigen::MatrixXd embedding = solver.eigenvectors().leftCols(k);  // eigenvalues come ascending
  for (Index i = 0; i < n; ++i) {
    const double norm = embedding.row(i).norm();
    if (norm > 0.0) {
      embedding.row(i) /= norm;
    }
  }
  const std::vector<int> labels = kmeans(embedding, k, o);
  for (int e = 0; e < n; ++e) {
    groups[static_cast<std::size_t>(labels[static_cast<std::size_t>(e)])].push_back(e);
  }
  return groups;
}

double intra_score(const Eigen::MatrixXd& affinity, std::span<const int> experts) {
  double s = 0.0;
  for (const int i : experts) {
    s += affinity_to(affinity, i, experts);
  }
  return s;
}

Groups cap_group_sizes(const Eigen::MatrixXd& affinity, Groups groups, int num_max) {
  check_square(affinity, "group capacity");
  const auto n = static_cast<std::size_t>(affinity.rows());
  if (num_max < 0 || groups.size() * static_cast<std::size_t>(num_max) < n) {
    throw core::Error("group capacity: " + std::to_string(groups.size()) + " groups of at most " +
                      std::to_string(num_max) + " cannot hold " + std::to_string(n) + " experts");
  }
  std::vector<int> omega;
  for (auto& g : groups) {
    if (static_cast<int>(g.size()) <= num_max) {
      continue;
    }
    // Members by affinity to their group, descending (ties: lower index); keep the first num_max.
    std::vector<std::pair<double, int>> ranked;
    ranked.reserve(g.size());
    for (const int e : g) {
      ranked.emplace_back(affinity_to(affinity, e, g), e);
    }
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& x, const auto& y) { return std::tie(y.first, x.second) < std::tie(x.first, y.second); });
    g.clear();
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      (static_cast<int>(i) < num_max ? g : omega).push_back(ranked[i].second);
    }
    std::sort(g.begin(), g.end());
  }
  std::vector<double> score(groups.size());
  for (std::size_t d = 0; d < groups.size(); ++d) {
    score[d] = intra_score(affinity, groups[d]);
  }
  for (const int e : omega) {
    std::size_t best = groups.size();
    double best_score = -std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < groups.size(); ++d) {
      if (static_cast<int>(groups[d].size()) < num_max) {
        const double s = score_with(affinity, score[d], e, groups[d]);
        if (s > best_score) {
          best = d;
          best_score = s;
        }
      }
    }
    groups[best].insert(std::lower_bound(groups[best].begin(), groups[best].end(), e), e);
    score[best] = best_score;
  }
  return groups;
}

SizeBounds controlled_size_bounds(int n, int num_groups, double ratio, int max_size) {
  if (num_groups < 1 || n < 0 || !(ratio >= 0.0) || static_cast<std::int64_t>(num_groups) * max_size < n) {
    throw core::Error("controlled grouping: expected groups >= 1, ratio >= 0 and groups x max size >= experts, got " +
                      std::to_string(num_groups) + " groups of at most " + std::to_string(max_size) + " for " +
                      std::to_string(n) + " experts, ratio " + std::to_string(ratio));
  }
  const int e = n / num_groups;
  const int delta = std::max(1, static_cast<int>(std::lround(static_cast<double>(e) * ratio)));
  SizeBounds b;
  b.num_min = e == 0 ? 0 : std::max(1, e - delta);
  b.num_max = std::min(e + delta, max_size);
  return b;
}

Groups controlled_nonuniform_grouping(const Eigen::MatrixXd& affinity, const Groups& clusters, double ratio,
                                      int max_size) {
  check_square(affinity, "controlled grouping");
  const auto n = static_cast<int>(affinity.rows());
  const SizeBounds b = controlled_size_bounds(n, static_cast<int>(clusters.size()), ratio, max_size);
  Groups groups = cap_group_sizes(affinity, clusters, b.num_max);  // lines 6-16
  // Lines 17-20, one expert at a time.
  while (true) {
    std::size_t needy = groups.size();
    for (std::size_t d = 0; d < groups.size() && needy == groups.size(); ++d) {
      needy = static_cast<int>(groups[d].size()) < b.num_min ? d : groups.size();
    }
    if (needy == groups.size()) {
      return groups;
    }
    std::size_t from = 0;
    int weakest = -1;
    double weakest_affinity = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < groups.size(); ++d) {
      if (static_cast<int>(groups[d].size()) <= b.num_min) {
        continue;
      }
      for (const int e : groups[d]) {
        const double a = affinity_to(affinity, e, groups[d]);
        if (a < weakest_affinity || (a == weakest_affinity && e < weakest)) {
          weakest = e;
          weakest_affinity = a;
          from = d;
        }
      }
    }
    std::size_t to = groups.size();
    double best_score = -std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < groups.size(); ++d) {
      if (static_cast<int>(groups[d].size()) < b.num_min) {
        const double s = score_with(affinity, intra_score(affinity, groups[d]), weakest, groups[d]);
        if (s > best_score) {
          to = d;
          best_score = s;
        }
      }
    }
    groups[from].erase(std::find(groups[from].begin(), groups[from].end(), weakest));
    groups[to].insert(std::lower_bound(groups[to].begin(), groups[to].end(), weakest), weakest);
  }
}

double affinity_utilisation(const Eigen::MatrixXd& affinity, const Groups& groups) {
  const double total = affinity.sum() - affinity.diagonal().sum();  // both triangles
  if (total <= 0.0) {
    return 1.0;
  }
  double intra = 0.0;
  for (const auto& g : groups) {
    intra += intra_score(affinity, g);
    for (const int e : g) {
      intra -= affinity(e, e);  // pairs i != j only
    }
  }
  return intra / total;  // both ratios count each pair twice
}

double size_deviation(const Groups& groups, int n) {
  if (groups.empty()) {
    return 0.0;
  }
  const double ideal = static_cast<double>(n) / static_cast<double>(groups.size());
  double sum = 0.0;
  for (const auto& g : groups) {
    const double d = static_cast<double>(g.size()) - ideal;
    sum += d * d;
  }
  return std::sqrt(sum / static_cast<double>(groups.size()));
}

int knee_index(std::span<const double> s, std::span<const double> u) {
  if (s.empty() || s.size() != u.size()) {
    throw core::Error("knee: expected as many S(r) as U(r) values, at least one");
  }
  std::vector<int> order(s.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const auto i = static_cast<std::size_t>(a);
    const auto j = static_cast<std::size_t>(b);
    return std::tie(s[i], u[j], a) < std::tie(s[j], u[i], b);
  });
  const auto first = static_cast<std::size_t>(order.front());
  const auto last = static_cast<std::size_t>(order.back());
  const double s_range = s[last] - s[first];
  const auto [u_min, u_max] = std::minmax_element(u.begin(), u.end());
  const double u_range = *u_max - *u_min;
  const int fallback = order.front();  // least S, then largest U, then lowest index
  if (s_range <= 0.0 || u_range <= 0.0) {
    return fallback;
  }
  // Signed distance above the chord in the scaled plane (positive: more U than the chord at that S);
  // the chord runs from (0, y0) to (1, y1).
  const double y0 = (u[first] - *u_min) / u_range;
  const double y1 = (u[last] - *u_min) / u_range;
  const double len = std::hypot(1.0, y1 - y0);
  constexpr double k_eps = 1e-12;
  int best = -1;
  double best_d = 0.0;
  for (const int i : order) {
    const auto k = static_cast<std::size_t>(i);
    const double x = (s[k] - s[first]) / s_range;
    const double y = (u[k] - *u_min) / u_range;
    const double d = ((y - y0) - (y1 - y0) * x) / len;
    if (d > k_eps && (best < 0 || d > best_d + k_eps || (std::abs(d - best_d) <= k_eps && i < best))) {
      best = i;
      best_d = d;
    }
  }
  return best < 0 ? fallback : best;
}

RatioChoice choose_ratio_at_knee(const Eigen::MatrixXd& affinity, const Groups& clusters,
                                 std::span<const double> ratios, int max_size) {
  if (ratios.empty()) {
    throw core::Error("controlled grouping: expected at least one candidate ratio r");
  }
  RatioChoice c;
  std::vector<Groups> candidates;
  for (const double r : ratios) {
    candidates.push_back(controlled_nonuniform_grouping(affinity, clusters, r, max_size));
    c.s.push_back(size_deviation(candidates.back(), static_cast<int>(affinity.rows())));
    c.u.push_back(affinity_utilisation(affinity, candidates.back()));
  }
  c.index = knee_index(c.s, c.u);
  c.ratio = ratios[static_cast<std::size_t>(c.index)];
  c.groups = std::move(candidates[static_cast<std::size_t>(c.index)]);
  return c;
}

}  // namespace epsim::policies
