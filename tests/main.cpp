// SPDX-License-Identifier: Apache-2.0
// The Catch2 runner, compiled once and shared by every test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
