#pragma once
/// \file
/// Small string helpers shared by the SigV4 sources. Internal to src/auth: not part of the layer's API.

#include "auth/sigv4.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace depot::auth::detail {

/// ASCII case-insensitive equality (header names).
bool iequals(std::string_view a, std::string_view b) noexcept;

/// ASCII lower-case copy.
std::string to_lower(std::string_view s);

/// Removes leading and trailing spaces and horizontal tabs.
std::string_view trim(std::string_view s) noexcept;

/// True if `s` is non-empty and all hex digits (either case).
bool is_hex(std::string_view s) noexcept;

/// Splits a request target at the first '?': (path, query without the '?').
std::pair<std::string_view, std::string_view> split_target(std::string_view raw_target) noexcept;

/// The value of the first header named `name` (case-insensitive), if any.
std::optional<std::string_view> find_header(std::span<const header_view> headers,
                                            std::string_view name) noexcept;

/// How many headers are named `name` (case-insensitive).
std::size_t count_header(std::span<const header_view> headers, std::string_view name) noexcept;

/// S3's rule for the mechanisms one request may carry (SigV4 and SigV2 alike): an Authorization header or a
/// presigned query (`presigned`), not both, and one Authorization header at most. Returns how many
/// Authorization headers there are (0 or 1); invalid_argument / authorization_header_malformed otherwise.
result<std::size_t> authorization_headers(std::span<const header_view> headers, bool presigned);

/// Parses "<access key id>/<YYYYMMDD>/<region>/<service>/aws4_request"; nullopt when malformed.
std::optional<std::pair<std::string, credential_scope>> parse_credential(std::string_view credential);

} // namespace depot::auth::detail
