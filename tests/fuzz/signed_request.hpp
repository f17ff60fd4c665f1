#pragma once
/// \file
/// The input format of the signature fuzz targets (sigv4, sigv2): the first line is the request target, each
/// further line a header "name:value" (a line without ':' is a header with an empty value).

#include "auth/sigv4.hpp"

#include <string_view>
#include <vector>

namespace depot::fuzz {

/// Splits `in` into the target and headers; the views point into `in`.
inline std::string_view split_signed_request(std::string_view in, std::vector<auth::header_view>& headers)
{
    auto nl = in.find('\n');
    const std::string_view target = in.substr(0, nl);
    while (nl != std::string_view::npos) {
        in.remove_prefix(nl + 1);
        nl = in.find('\n');
        const auto line = in.substr(0, nl);
        const auto colon = line.find(':');
        headers.push_back(colon == std::string_view::npos
                              ? auth::header_view{line, {}}
                              : auth::header_view{line.substr(0, colon), line.substr(colon + 1)});
    }
    return target;
}

} // namespace depot::fuzz
