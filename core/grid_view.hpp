// SPDX-License-Identifier: Apache-2.0
#pragma once
// A row-major view of a flat buffer as an N-dimensional array: `w(q, l, o, e)` instead of
// `((q * L + l) * O + o) * E + e` with a cast on every index. Arrays such as W[pass][layer][origin][expert]
// stay one contiguous std::vector (cheap to copy, hand to Clp or Eigen); the view only does the index
// arithmetic, checked against the extents in debug builds.
#include <array>
#include <cassert>
#include <cstddef>
#include <span>
#include <type_traits>

namespace epsim::core {

template <class T, std::size_t N>
class GridView {
 public:
  using Index = std::array<std::size_t, N>;

  /// `data` must hold exactly the product of the extents.
  template <class... Extents>
    requires(sizeof...(Extents) == N && (std::is_integral_v<Extents> && ...))
  GridView(std::span<T> data, Extents... extents) : data_(data), extents_{static_cast<std::size_t>(extents)...} {
    assert(data.size() == size());
  }

  std::size_t extent(std::size_t dim) const { return extents_[dim]; }
  std::size_t size() const {
    std::size_t n = 1;
    for (const std::size_t e : extents_) {
      n *= e;
    }
    return n;
  }
  std::span<T> data() const { return data_; }

  /// The element at (i0, ..., iN-1); indices are any integers within the extents.
  template <class... Ints>
    requires(sizeof...(Ints) == N && (std::is_integral_v<Ints> && ...))
  T& operator()(Ints... idx) const {
    return data_[offset({static_cast<std::size_t>(idx)...})];
  }

  /// The contiguous run along the last dimension at the leading indices (i0, ..., iN-2).
  template <class... Ints>
    requires(sizeof...(Ints) == N - 1 && (std::is_integral_v<Ints> && ...))
  std::span<T> row(Ints... idx) const {
    const std::array<std::size_t, N - 1> lead{static_cast<std::size_t>(idx)...};
    Index full{};
    for (std::size_t d = 0; d + 1 < N; ++d) {
      full[d] = lead[d];
    }
    return data_.subspan(offset(full), extents_[N - 1]);
  }

 private:
  std::size_t offset(const Index& idx) const {
    std::size_t at = 0;
    for (std::size_t d = 0; d < N; ++d) {
      assert(idx[d] < extents_[d]);
      at = at * extents_[d] + idx[d];
    }
    return at;
  }

  std::span<T> data_;
  Index extents_{};
};

/// A view of `v` (a std::vector or any contiguous range) with the given extents.
template <class Container, class... Extents>
auto grid(Container& v, Extents... extents) {
  using T = std::remove_reference_t<decltype(*v.data())>;
  return GridView<T, sizeof...(Extents)>(std::span<T>(v.data(), v.size()), extents...);
}

}  // namespace epsim::core
