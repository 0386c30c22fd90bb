// SPDX-License-Identifier: Apache-2.0
#pragma once
// User input as epsim prints it: in errors, tables and progress lines. A label, a name or a JSON value
// may hold terminal escapes (ANSI colour or cursor codes, a bell, a carriage return that overwrites the
// line) or be megabytes long; printed as is, it would drive the terminal or bury the message.
#include <cstddef>
#include <string>
#include <string_view>

namespace epsim::core {

/// `text` with every control character (C0, DEL, and the C1 range U+0080-U+009F in UTF-8) shown as a
/// visible escape ("\x1b", "\u009b"); tabs and newlines too, so one message stays one line.
std::string terminal_safe(std::string_view text);

/// Whether `text` holds a character terminal_safe would escape.
bool has_control_characters(std::string_view text);

/// At most `max_chars` bytes of `text` (cut at a UTF-8 character boundary), with "... (N bytes)" after
/// a cut: for echoing a user's value in a message or metadata.
std::string excerpt(std::string_view text, std::size_t max_chars = 80);

}  // namespace epsim::core
