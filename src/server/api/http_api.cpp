#include "server/api/http_api.hpp"

#include "common/hash.hpp"
#include "common/http_date.hpp"
#include "s3/errors.hpp"
#include "server/authorization.hpp"
#include "server/s3/common.hpp"
#include "server/services.hpp"

#include <boost/json/error.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <ctime>
#include <optional>
#include <set>
#include <string>
#include <vector>

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

std::string own_origin(const request_context& ctx)
{
    const bool tls = !ctx.svc->opts.tls_cert_file.empty();
    return std::string(tls ? "https://" : "http://") + std::string(ctx.get("host").value_or(""));
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

/// Whether a number in `v` is outside the range of a double: Boost.JSON reads 1e400 as infinity, which no
/// JSON text (nor a PostgreSQL jsonb) can hold.
bool holds_infinity(const json::value& v)
{
    switch (v.kind()) {
    case json::kind::double_:
        return !std::isfinite(v.get_double());
    case json::kind::array:
        for (const auto& item : v.get_array())
            if (holds_infinity(item))
                return true;
        return false;
    case json::kind::object:
        for (const auto& member : v.get_object())
            if (holds_infinity(member.value()))
                return true;
        return false;
    default:
        return false;
    }
}

} // namespace

bool is_json_media_type(std::string_view v) noexcept
{
    auto trim = [](std::string_view t) {
        while (!t.empty() && (t.front() == ' ' || t.front() == '\t'))
            t.remove_prefix(1);
        while (!t.empty() && (t.back() == ' ' || t.back() == '\t'))
            t.remove_suffix(1);
        return t;
    };
    const auto media = trim(v.substr(0, v.find(';')));
    constexpr std::string_view json_type = "application/json";
    if (media.size() != json_type.size())
        return false;
    for (std::size_t i = 0; i < media.size(); ++i) {
        char c = media[i];
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
        if (c != json_type[i])
            return false;
    }
    return true;
}

result<json::object> parse_json_object(std::string_view text)
{
    boost::system::error_code ec;
    auto value = json::parse(text, ec);
    if (ec)
        return make_error(errc::invalid_argument, "The request body is not valid JSON: " + ec.message());
    if (!value.is_object())
        return make_error(errc::invalid_argument, "The request body must be a JSON object");
    if (holds_nul(value))
        return make_error(errc::invalid_argument,
                          "Strings in the request body may not contain NUL (\\u0000)");
    if (holds_infinity(value))
        return make_error(errc::invalid_argument,
                          "A number in the request body is beyond the range of a double");
    if (const auto dup = duplicate_member(text))
        return make_error(errc::invalid_argument,
                          "The request body names " +
                              (dup->size() <= 64 ? "the member '" + *dup + "'" : std::string("a member")) +
                              " twice in one object: each name may appear once");
    return std::move(value.as_object());
}

std::optional<response> refuse_unless_json_body(const request_context& ctx, std::string_view instance)
{
    const bool has_body = (ctx.content_length && *ctx.content_length > 0) ||
                          ctx.header->find(http::field::transfer_encoding) != ctx.header->end();
    if (!has_body)
        return std::nullopt;
    std::size_t types = 0;
    std::string_view type;
    for (const auto& f : *ctx.header)
        if (f.name() == http::field::content_type) {
            ++types;
            type = std::string_view(f.value().data(), f.value().size());
        }
    if (types == 1 && is_json_media_type(type))
        return std::nullopt;
    json::object body{{"type", "urn:depot:problem:unsupported-media-type"},
                      {"title", "UnsupportedMediaType"},
                      {"status", 415},
                      {"detail", types > 1 ? "The request has more than one Content-Type header"
                                           : "The request body must be JSON, sent with Content-Type: "
                                             "application/json"},
                      {"instance", instance},
                      {"request_id", ctx.request_id},
                      {"argument", "Content-Type"}};
    auto res = json_response(body, http::status::unsupported_media_type);
    res.headers.set(http::field::content_type, "application/problem+json");
    return res;
}

asio::awaitable<result<json::object>> read_json_object(request_context& ctx, std::size_t limit)
{
    auto text = co_await s3op::read_small_body(ctx, limit);
    if (!text)
        co_return std::move(text).error();
    co_return parse_json_object(*text);
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

asio::awaitable<result<registry::bucket>> caller_bucket(request_context& ctx, std::string_view name,
                                                        std::string_view action, std::string_view key)
{
    auto b = co_await caller_bucket(ctx, name);
    if (!b || action.empty())
        co_return b;
    if (auto allowed = authorize_bucket_rest(ctx, ctx.permission, *b, action, key); !allowed)
        co_return std::move(allowed).error();
    co_return b;
}

std::string iso8601(std::chrono::system_clock::time_point t)
{
    return format_iso8601(t);
}

} // namespace depot::server::api
