#pragma once
/// \file
/// Parts shared by ListObjects and ListObjectsV2: request parameters and the conversion of a page.

#include "registry/service/object_service.hpp"
#include "s3/responses.hpp"
#include "server/context.hpp"

namespace depot::server::s3op {

struct listing_params
{
    std::string prefix;
    std::string delimiter;
    std::size_t max_keys = 1000;
    bool url_encoding = false;
};

/// prefix, delimiter, max-keys and encoding-type. Errors: invalid_argument naming the parameter.
result<listing_params> listing_params_of(const request_context& ctx);

/// The Contents entries of a page.
std::vector<s3::object_entry> entries_of(const registry::list_page& page);

} // namespace depot::server::s3op
