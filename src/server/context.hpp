#pragma once
/// \file
/// What a request handler sees and returns. A handler gets a `request_context` (parsed request, the caller,
/// a lazily read body) and returns `result<response>`; an error becomes an S3 XML error (or problem+json for
/// the REST API) at one place, the session.

#include "auth/authorize.hpp"
#include "common/byte_source.hpp"
#include "common/result.hpp"
#include "registry/types.hpp"

#include <any>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot::server {

namespace http = boost::beast::http;

struct services;
namespace s3op {
struct post_form;
}

/// The authenticated principal of a request.
struct caller
{
    std::string user_id;
    std::string display_name;
    std::string access_key_id;
    bool is_admin = false;
    /// The credential's scope (a JSON object, auth/scope.hpp); empty = not narrowed.
    std::string scope;
    /// Set when a console session cookie authenticated the request (api/sessions.cpp): its id.
    std::string session_id;
    /// When the access key or API token that authenticated the request stops working (none: never).
    std::optional<registry::time_point> expires_at;
};

/// How the request body is protected, as declared by the signature.
struct payload_check
{
    /// Raw SHA-256 the body must have (a signed x-amz-content-sha256); empty = unsigned payload.
    std::string sha256;
};

/// Which of depotd's listeners a request came in on (server.cpp, set by the session).
enum class listener_kind
{
    s3,      ///< --listen: S3, the Hub API, REST with tokens and signatures; no console, no session cookie
    console, ///< --console-listen: the console's pages and REST, session cookies honoured; no S3, no Hub
    shared,  ///< --console-listen shared: --listen serving all of it
};

struct request_context
{
    const http::request_header<>* header = nullptr;
    std::string request_id;
    std::string remote; ///< client address
    std::string bucket; ///< decoded; empty for service-level requests
    std::string key;    ///< decoded; empty for bucket-level requests
    std::vector<std::pair<std::string, std::string>> query;
    caller who;
    /// Who asks, as authorization sees it: set once after authentication (server/authorization.hpp).
    auth::principal principal;
    /// Who the request's changes are done by, for their audit rows: set with `principal`, passed explicitly
    /// to every service operation that changes state (registry/service/audit.hpp).
    registry::audit_context audit;
    /// The permission of the route being served (its table's column).
    auth::permission permission = auth::permission::whoami;
    /// The AWS action of the S3 route being served, as bucket policies name it (server/dispatch.cpp's
    /// action table; the version form when the request names a versionId); empty outside S3 routes.
    std::string_view s3_action;
    /// The request came over TLS (aws:SecureTransport).
    bool secure = false;
    /// The listener it came in on: the console's session cookie is honoured only where the console is.
    listener_kind listener = listener_kind::s3;
    bool on_console_listener() const noexcept { return listener != listener_kind::s3; }
    payload_check payload;
    /// The body, read on demand; the first read sends "100 Continue" when the client asked for it.
    depot::byte_source* body = nullptr;
    /// Owns a decoding wrapper around the raw body (aws-chunked), when `body` points to one.
    std::unique_ptr<depot::byte_source> body_decoder;
    /// Declared body length, if any: Content-Length, or x-amz-decoded-content-length for aws-chunked.
    std::optional<std::uint64_t> content_length;
    services* svc = nullptr;
    /// Set by the scope check when an alias-scoped credential reads a path of its model's bucket: the
    /// models-view key (team/model/alias/path) whose frozen bytes the read serves instead of the live object.
    std::string frozen_view_key;
    /// The bucket an S3 bucket or object route, or a REST {bucket} route, acts on, loaded and decided by the
    /// authorization step before the handler runs (server/pipeline.hpp); handlers read it with
    /// authorized_bucket (below).
    std::optional<registry::bucket> route_bucket;
    /// POST Object: the form read up to its file part while authenticating (server/s3/post_object.hpp).
    std::shared_ptr<s3op::post_form> post_form;

    /// The value of a query parameter, if present.
    std::optional<std::string_view> param(std::string_view name) const
    {
        for (const auto& [n, v] : query)
            if (n == name)
                return std::string_view(v);
        return std::nullopt;
    }
    bool has_param(std::string_view name) const { return param(name).has_value(); }
    /// A request header's value, if present.
    std::optional<std::string_view> get(std::string_view name) const
    {
        auto it = header->find(name);
        if (it == header->end())
            return std::nullopt;
        return std::string_view(it->value().data(), it->value().size());
    }
};

/// The addressed bucket (S3's, REST's {bucket}), as the authorization step loaded it and decided the
/// route's permission on it (ctx.route_bucket) before the handler ran: a handler never decides its bucket
/// itself. internal when the step did not run.
inline result<registry::bucket> authorized_bucket(const request_context& ctx)
{
    if (!ctx.route_bucket)
        return make_error(errc::internal, "The route's bucket was not decided before its handler");
    return *ctx.route_bucket;
}

/// A response. Small bodies are `body`; object data is `stream` of exactly `stream_length` bytes.
struct response
{
    http::status status = http::status::ok;
    http::fields headers;
    std::string body;
    std::unique_ptr<depot::byte_source> stream;
    std::uint64_t stream_length = 0;
    /// Keeps whatever `stream` reads from alive until the response is written.
    std::shared_ptr<void> keep;
    /// HEAD: headers as for GET (including Content-Length) but no body bytes.
    bool head_only = false;
};

inline response xml_response(std::string xml, http::status status = http::status::ok)
{
    response r;
    r.status = status;
    r.headers.set(http::field::content_type, "application/xml");
    r.body = std::move(xml);
    return r;
}

} // namespace depot::server
