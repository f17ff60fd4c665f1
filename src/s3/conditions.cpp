#include "s3/conditions.hpp"

#include "common/http_date.hpp"
#include "common/strings.hpp"
#include "s3/etag.hpp"

#include <chrono>

namespace depot::s3 {

namespace {

/// Last-Modified as the client saw it: HTTP dates have whole seconds.
time_point to_seconds(time_point t)
{
    return std::chrono::floor<std::chrono::seconds>(t);
}

/// The common evaluation; `none_match_failure` is what a matching If-None-Match or a failed
/// If-Modified-Since answers (304 for reads, 412 for copy sources).
condition_result evaluate(const read_conditions& c, std::string_view etag, time_point last_modified,
                          condition_result none_match_failure)
{
    const auto modified = to_seconds(last_modified);
    if (c.if_match) {
        if (!etag_list_matches(*c.if_match, etag, false))
            return condition_result::precondition_failed;
    } else if (c.if_unmodified_since) {
        if (auto since = parse_http_date(*c.if_unmodified_since); since && modified > *since)
            return condition_result::precondition_failed;
    }
    if (c.if_none_match) {
        if (etag_list_matches(*c.if_none_match, etag, true))
            return none_match_failure;
    } else if (c.if_modified_since) {
        if (auto since = parse_http_date(*c.if_modified_since); since && modified <= *since)
            return none_match_failure;
    }
    return condition_result::proceed;
}

} // namespace

bool etag_list_matches(std::string_view header, std::string_view etag, bool weak)
{
    header = trim_ows(header);
    if (header == "*")
        return true;
    std::size_t start = 0;
    for (;;) {
        const auto comma = header.find(',', start);
        const auto element =
            trim_ows(header.substr(start, comma == std::string_view::npos ? comma : comma - start));
        if (!element.empty() && (weak || !element.starts_with("W/")) && unquote_etag(element) == etag)
            return true;
        if (comma == std::string_view::npos)
            return false;
        start = comma + 1;
    }
}

condition_result evaluate_read_conditions(const read_conditions& conditions, std::string_view etag,
                                          time_point last_modified)
{
    return evaluate(conditions, etag, last_modified, condition_result::not_modified);
}

condition_result evaluate_copy_source_conditions(const read_conditions& conditions, std::string_view etag,
                                                 time_point last_modified)
{
    return evaluate(conditions, etag, last_modified, condition_result::precondition_failed);
}

result<void> to_result(condition_result outcome)
{
    switch (outcome) {
    case condition_result::proceed:
        return ok();
    case condition_result::not_modified:
        return make_error(errc::not_modified);
    case condition_result::precondition_failed:
        return make_error(errc::precondition_failed);
    }
    return ok();
}

result<void> evaluate_write_conditions(const write_conditions& conditions,
                                       std::optional<std::string_view> current_etag)
{
    if (conditions.if_none_match) {
        if (conditions.if_match)
            return make_error(errc::not_implemented,
                              "A header you provided implies functionality that is not implemented");
        // "*": no current object; a list of ETags (as radosgw and MinIO take it): none of them current.
        if (current_etag && etag_list_matches(*conditions.if_none_match, *current_etag, true))
            return make_error(errc::precondition_failed);
        return ok();
    }
    if (conditions.if_match) {
        if (!current_etag)
            return make_error(errc::no_such_key);
        if (!etag_list_matches(*conditions.if_match, *current_etag, false))
            return make_error(errc::precondition_failed);
    }
    return ok();
}

bool if_range_holds(std::string_view validator, std::string_view etag, time_point last_modified)
{
    validator = trim_ows(validator);
    // An entity tag: quoted (W/ tags never hold: the comparison is strong). Otherwise an HTTP date, which
    // holds only when it is the representation's Last-Modified exactly.
    if (validator.starts_with('"'))
        return validator.size() >= 2 && validator.back() == '"' && unquote_etag(validator) == etag;
    if (validator.starts_with("W/"))
        return false;
    const auto date = parse_http_date(validator);
    return date && *date == to_seconds(last_modified);
}

} // namespace depot::s3
