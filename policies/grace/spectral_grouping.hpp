// SPDX-License-Identifier: Apache-2.0
#pragma once
// GRACE-MoE's expert grouping (paper 004, Section 4.1 and Appendix A.2). Node level: spectral clustering
// of the affinity into fully non-uniform groups. GPU level: controlled non-uniform grouping (Algorithm 2)
// with non-uniformity ratio r, r chosen at the knee of the (S(r), U(r)) curve of Eq. 1.
//
// Spectral clustering (the paper names it only): Ng-Jordan-Weiss. L_sym = I - D^-1/2 A D^-1/2 (an
// isolated expert, degree 0, gets D^-1/2 = 0), the k eigenvectors of the smallest eigenvalues
// (Eigen::SelfAdjointEigenSolver), rows normalised to unit length (zero rows stay zero), then k-means.
// k-means: k-means++ seeding driven by a core::Rng (boost mt19937_64) seeded explicitly, Lloyd
// iterations until no label changes, `restarts` runs keeping the lowest inertia (first on ties); ties in
// distance go to the lowest centre. Labels are renumbered by each cluster's smallest member.
// Groups hold indices into the affinity matrix given, each sorted ascending.
#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

namespace epsim::policies {

using Groups = std::vector<std::vector<int>>;

struct KMeansOptions {
  int restarts = 10;         ///< independent k-means++ runs; the lowest inertia wins
  int max_iterations = 300;  ///< Lloyd iterations per run
  std::uint64_t seed = 0;    ///< seeds the core::Rng of the k-means++ draws
};

/// k-means on the rows of `points`: labels in [0, k), renumbered by smallest member (a cluster left empty
/// gets no label). Throws core::Error unless 1 <= k.
std::vector<int> kmeans(const Eigen::MatrixXd& points, int k, const KMeansOptions& o);

/// Spectral clustering (NJW, above) of a symmetric non-negative affinity into k groups, sizes free.
/// With k >= n every expert is its own group (the rest empty). Returns k groups, some maybe empty.
Groups spectral_clustering(const Eigen::MatrixXd& affinity, int k, const KMeansOptions& o);

/// Algorithm 1: sum over i, j in S of A[i][j].
double intra_score(const Eigen::MatrixXd& affinity, std::span<const int> experts);

/// Algorithm 2, lines 6-16: a group larger than `num_max` keeps its `num_max` members of highest
/// affinity to the group (ties: lower index), the others go, in order, to the group with room that
/// maximises IntraScore(L_d + {e}) (ties: lower group). Also GRACE's node-capacity rule (docs/policies.md).
Groups cap_group_sizes(const Eigen::MatrixXd& affinity, Groups groups, int num_max);

struct SizeBounds {
  int num_min = 0;
  int num_max = 0;
};
/// Algorithm 2, lines 2-3: E = floor(n / D), delta = max(1, round(E r)), [max(1, E - delta), E + delta];
/// num_min is 0 when n < D (E = 0: some group must stay empty), num_max is capped at `max_size` (slots).
SizeBounds controlled_size_bounds(int n, int num_groups, double ratio, int max_size);

/// Algorithm 2 from the spectral `clusters` (D = clusters.size() groups over n = affinity.rows()
/// experts). Lines 17-20, which the paper leaves open, as: while a group is below num_min, take the
/// expert of least affinity to its own group among groups above num_min (ties: lower index) and move it
/// to the needy group maximising IntraScore(L_d + {e}) (ties: lower group).
Groups controlled_nonuniform_grouping(const Eigen::MatrixXd& affinity, const Groups& clusters, double ratio,
                                      int max_size);

/// Eq. 1: U = intra-group affinity over all affinity (pairs i < j); 1 when the affinity is all zero.
double affinity_utilisation(const Eigen::MatrixXd& affinity, const Groups& groups);
/// Eq. 1: S = sqrt(mean over groups of (|C_d| - n / D)^2).
double size_deviation(const Groups& groups, int n);

/// The knee of the points (S_i, U_i), i = candidate index (the paper: "select the knee point" of the
/// plot; it does not say how). Kneedle-like: points sorted by S (then U descending, then index), both
/// axes scaled to [0, 1], the point farthest above the chord from the first to the last sorted point.
/// No point above the chord (a straight or convex curve), or all S equal: the point of least S, then
/// largest U. Ties: lowest index. Throws core::Error on empty or unequal inputs.
int knee_index(std::span<const double> s, std::span<const double> u);

struct RatioChoice {
  int index = 0;          ///< into the candidate ratios
  double ratio = 0.0;     ///< r at the knee
  Groups groups;          ///< Algorithm 2's grouping with that r
  std::vector<double> s;  ///< S(r) of every candidate
  std::vector<double> u;  ///< U(r) of every candidate
};
/// Algorithm 2 for every candidate r (same spectral clusters), then the knee. Throws on no candidates.
RatioChoice choose_ratio_at_knee(const Eigen::MatrixXd& affinity, const Groups& clusters,
                                 std::span<const double> ratios, int max_size);

}  // namespace epsim::policies
