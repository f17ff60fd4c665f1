#pragma once
/// \file
/// Bucket CORS configurations (PutBucketCors, GetBucketCors) and how S3 evaluates them: a browser's
/// preflight (OPTIONS with Origin and Access-Control-Request-Method) and the headers added to an actual
/// request that carries Origin. https://docs.aws.amazon.com/AmazonS3/latest/userguide/cors.html
///
/// Every string a configuration holds may end up in a response header, so a rule's origins, headers and
/// methods are restricted to visible ASCII when the configuration enters (no header splitting later).

#include "common/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::s3 {

struct cors_rule
{
    std::string id;
    std::vector<std::string> allowed_methods; ///< GET, PUT, POST, DELETE, HEAD
    std::vector<std::string> allowed_origins; ///< each with at most one '*'
    std::vector<std::string> allowed_headers; ///< each with at most one '*'; matched case-insensitively
    std::vector<std::string> expose_headers;
    std::optional<int> max_age_seconds;
};

struct cors_configuration
{
    std::vector<cors_rule> rules; ///< 1..100, evaluated in order
};

inline constexpr std::size_t max_cors_rules = 100;

/// Parses and validates a CORSConfiguration body as S3 does. MalformedXML for bad XML, no rule, more than
/// 100 rules, a rule without AllowedMethod or AllowedOrigin, or a bad MaxAgeSeconds; InvalidRequest for an
/// unsupported method, more than one wildcard in an origin or header, or characters a header cannot carry.
result<cors_configuration> parse_cors_configuration(std::string_view body);

/// The configuration as GetBucketCors returns it (also what Depot stores).
std::string cors_configuration_xml(const cors_configuration& config);

/// True when `value` matches `pattern`, which may hold one '*' standing for any run of characters.
/// `fold_case`: compare ASCII letters case-insensitively (header names).
bool cors_wildcard_match(std::string_view pattern, std::string_view value, bool fold_case);

/// The first rule allowing `origin` with `method` and every header of `request_headers` (a comma-separated
/// Access-Control-Request-Headers value; empty for none); nullptr when none does.
const cors_rule* find_cors_rule(const cors_configuration& config, std::string_view origin,
                                std::string_view method, std::string_view request_headers);

/// A response header to add: name and value.
using cors_header = std::pair<std::string, std::string>;

/// The headers of a preflight answered by `rule` (Access-Control-Allow-Origin/-Methods/-Headers/-Max-Age,
/// -Allow-Credentials, -Expose-Headers, Vary). `request_headers` must have matched the rule.
std::vector<cors_header> cors_preflight_headers(const cors_rule& rule, std::string_view origin,
                                                std::string_view request_headers);

/// The headers added to an actual request from `origin` that `rule` allows.
std::vector<cors_header> cors_response_headers(const cors_rule& rule, std::string_view origin);

} // namespace depot::s3
