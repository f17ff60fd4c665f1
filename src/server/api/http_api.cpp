#include "server/api/http_api.hpp"

#include "common/hash.hpp"
#include "common/http_date.hpp"
#include "s3/errors.hpp"
#include "server/authorization.hpp"
#include "server/s3/common.hpp"
#include "server/services.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <ctime>

namespace depot::server::api {

std::string_view path_param(const path_params& params, std::string_view name)
{
    for (const auto& [n, v] : params)
        if (n == name)
            return v;
    return {};
}

std::optional<std::string_view> session_cookie(const request_context& ctx)
{
    for (const auto& field : *ctx.header) {
        if (field.name() != http::field::cookie)
            continue;
        std::string_view rest(field.value().data(), field.value().size());
        while (!rest.empty()) {
            auto semi = rest.find(';');
            auto pair = rest.substr(0, semi);
            rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
            while (!pair.empty() && pair.front() == ' ')
                pair.remove_prefix(1);
            auto eq = pair.find('=');
            if (eq != std::string_view::npos && pair.substr(0, eq) == session_cookie_name)
                return pair.substr(eq + 1);
        }
    }
    return std::nullopt;
}

response json_response(const json::value& body, http::status status)
{
    response r;
    r.status = status;
    r.headers.set(http::field::content_type, "application/json");
    r.body = json::serialize(body);
    r.body += '\n';
    return r;
}

response problem_response(const error& err, std::string_view instance, std::string_view request_id)
{
    auto info = s3::describe(err);
    std::string type = "urn:depot:problem:";
    for (char c : to_string(err.code))
        type += c == '_' ? '-' : c;
    // The REST API never answers with S3's 403 for a resource the caller cannot see: it would confirm the
    // resource exists. Handlers return not_found (or no_such_bucket) for those.
    json::object body{{"type", type},          {"title", info.code},   {"status", info.status},
                      {"detail", err.message}, {"instance", instance}, {"request_id", request_id}};
    if (!err.argument.empty())
        body["argument"] = err.argument;
    auto res = json_response(body, static_cast<http::status>(info.status));
    res.headers.set(http::field::content_type, "application/problem+json");
    return res;
}

namespace {

/// JSON may carry "\u0000", which no PostgreSQL text or jsonb value can hold (the parser has already refused
/// bytes that are not UTF-8). Looks through every string and member name.
bool holds_nul(const json::value& v)
{
    auto has_nul = [](std::string_view s) { return s.find('\0') != std::string_view::npos; };
    switch (v.kind()) {
    case json::kind::string:
        return has_nul(v.get_string());
    case json::kind::array:
        for (const auto& item : v.get_array())
            if (holds_nul(item))
                return true;
        return false;
    case json::kind::object:
        for (const auto& member : v.get_object())
            if (has_nul(member.key()) || holds_nul(member.value()))
                return true;
        return false;
    default:
        return false;
    }
}

} // namespace

asio::awaitable<result<json::object>> read_json_object(request_context& ctx, std::size_t limit)
{
    auto text = co_await s3op::read_small_body(ctx, limit);
    if (!text)
        co_return std::move(text).error();
    boost::system::error_code ec;
    auto value = json::parse(*text, ec);
    if (ec)
        co_return make_error(errc::invalid_argument, "The request body is not valid JSON: " + ec.message());
    if (!value.is_object())
        co_return make_error(errc::invalid_argument, "The request body must be a JSON object");
    if (holds_nul(value))
        co_return make_error(errc::invalid_argument,
                             "Strings in the request body may not contain NUL (\\u0000)");
    co_return std::move(value.as_object());
}

result<std::string> string_field(const json::object& o, std::string_view name, bool required)
{
    auto it = o.find(name);
    if (it == o.end() || it->value().is_null()) {
        if (required)
            return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' is required");
        return std::string();
    }
    if (!it->value().is_string())
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' must be a string");
    return std::string(it->value().as_string());
}

result<std::int64_t> integer_field(const json::object& o, std::string_view name, std::int64_t min,
                                   std::int64_t max)
{
    auto it = o.find(name);
    if (it == o.end())
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' is required");
    const auto& v = it->value();
    std::int64_t n = 0;
    if (v.is_int64())
        n = v.as_int64();
    else if (v.is_uint64() && v.as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        n = static_cast<std::int64_t>(v.as_uint64());
    else
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' must be an integer");
    if (n < min || n > max)
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' must be between " +
                                                      std::to_string(min) + " and " + std::to_string(max));
    return n;
}

result<std::string> sha256_of(std::string_view hex, std::string_view field)
{
    auto raw = hex.size() == 64 ? from_hex(hex) : std::nullopt;
    if (!raw)
        return make_error(errc::invalid_argument,
                          "The field '" + std::string(field) + "' must be a SHA-256 digest as 64 hex digits");
    return std::move(*raw);
}

result<void> only_fields(const json::object& o, std::initializer_list<std::string_view> allowed)
{
    for (const auto& member : o) {
        bool known = false;
        for (auto a : allowed)
            known = known || member.key() == a;
        if (!known)
            return make_error(errc::invalid_argument, "Unknown field '" + std::string(member.key()) + "'");
    }
    return ok();
}

asio::awaitable<result<registry::bucket>> caller_bucket(request_context& ctx, std::string_view name)
{
    auto b = co_await ctx.svc->buckets.get(name);
    if (!b || !authorize_bucket(ctx, ctx.permission, *b))
        co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
    co_return b;
}

std::string iso8601(std::chrono::system_clock::time_point t)
{
    return format_iso8601(t);
}

} // namespace depot::server::api
