#pragma once
/// \file
/// Strict UTF-8 decoding and encoding (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
/// Shared by key validation, `prefix_successor` and the XML writer.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace depot::s3 {

/// Decodes the code point starting at `text[pos]` and advances `pos` past it. Returns nullopt (and leaves
/// `pos` unchanged) when the bytes there are not a well-formed UTF-8 sequence. Precondition: pos < size.
std::optional<char32_t> decode_utf8(std::string_view text, std::size_t& pos) noexcept;

/// True when every byte of `text` belongs to a well-formed UTF-8 sequence. The empty string is valid.
bool is_valid_utf8(std::string_view text) noexcept;

/// True when `text` can be stored in a PostgreSQL text column: well-formed UTF-8 without NUL. Request
/// strings that reach a query (keys, prefixes, markers, names) are checked with this first, so that a bad
/// byte is a 400 and not a database error.
bool is_storable_text(std::string_view text) noexcept;

/// Appends the UTF-8 encoding of `cp`. Precondition: `cp` is a scalar value (not a surrogate, <= U+10FFFF).
void append_utf8(std::string& out, char32_t cp);

} // namespace depot::s3
