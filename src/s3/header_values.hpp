#pragma once
/// \file
/// What Depot accepts in a value it stores and later sends back as a response header (Content-Type, user
/// metadata, ...) or echoes from the request (the response-* overrides of GetObject), and in a user metadata
/// name. Checked where the value enters, so that nothing stored can split a later response.
///
/// HTTP (RFC 9110 section 5.5) allows visible ASCII, space, tab and obs-text bytes (0x80-0xFF) in a field
/// value. Depot also requires the bytes to be well-formed UTF-8, because PostgreSQL stores these values as
/// text, and refuses every control character but tab (CR and LF end a header line; NUL cannot be stored).

#include "common/result.hpp"

#include <string_view>

namespace depot::s3 {

/// True when `name` is a non-empty RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~ (what a header name
/// may be made of).
bool is_token(std::string_view name) noexcept;

/// True when `value` may be stored and sent back as a header value: well-formed UTF-8 without control
/// characters other than tab. The empty value is allowed.
bool is_field_value(std::string_view value) noexcept;

/// Checks `value` with `is_field_value`. Errors: invalid_argument naming `name` (the header, query parameter
/// or JSON field the value came from), with `name` as the argument.
result<void> validate_field_value(std::string_view name, std::string_view value);

} // namespace depot::s3
