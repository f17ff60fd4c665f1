#pragma once
/// \file
/// Percent-encoding as AWS uses it (SigV4 canonical requests, `encoding-type=url` listings): unreserved
/// characters A-Z a-z 0-9 - . _ ~ stay, every other byte becomes %XX with upper-case hex.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot {

/// Encodes every byte but the unreserved ones; '/' is kept when `keep_slash` (for paths).
std::string uri_encode(std::string_view in, bool keep_slash = false);

/// Decodes %XX escapes. '+' stays '+' unless `plus_is_space` (form encoding). nullopt on a bad escape.
std::optional<std::string> uri_decode(std::string_view in, bool plus_is_space = false);

/// Splits a raw query string ("a=1&b&c=%20") into decoded (name, value) pairs in order; a name without '='
/// has an empty value. nullopt if any escape is malformed.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view raw);

} // namespace depot
