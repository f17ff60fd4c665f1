#pragma once
/// \file
/// Parsers of the model registry's request bodies: names, approval policies, optional strings and objects,
/// a transition's comment. Each error is invalid_argument naming the field.

#include "registry/service/model_registry.hpp"
#include "registry/service/models.hpp"
#include "server/api/http_api.hpp"

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

namespace depot::server::api {

/// The name patterns of schema/0005_models.sql (checked here first for a precise error).
enum class name_kind
{
    team,  ///< ^[a-z0-9][a-z0-9._-]{0,62}$
    model, ///< ^[a-z0-9][a-z0-9._-]{0,127}$
    alias, ///< ^[A-Za-z][A-Za-z0-9._-]{0,62}$, not a commit id
    label, ///< ^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$, not only digits, not a commit id
};

/// Whether `s` is a name of that kind. An alias or a label never has the form of a version's commit id
/// (40 hexadecimal digits, as the Hub API names revisions): a writer's label taking an approved version's
/// commit id would be served for it wherever names resolve before commit ids.
bool valid_name(std::string_view s, name_kind kind);

/// A team role field (reader, writer, maintainer or admin).
result<registry::team_role> role_field(const json::object& o, std::string_view name);

/// The policy members present in `o` (each optional).
result<registry::policy_override> policy_fields(const json::object& o);

/// The optional "policy" member of `body`.
result<registry::policy_override> optional_policy(const json::object& body);

/// An optional string member ("" when absent) of at most `max` bytes.
result<std::string> optional_string(const json::object& o, std::string_view name, std::size_t max = 4096);

/// An optional member that must be a JSON object, returned serialized ("{}" when absent).
result<std::string> optional_object(const json::object& o, std::string_view name);

/// A transition's optional {"comment": "..."} body (an empty body is allowed).
asio::awaitable<result<std::string>> comment_of(request_context& ctx);

/// The list filter ?label=key=value (listModels, listVersions): nullopt when absent; invalid_argument
/// naming "label" when it has no '=', an empty key, or a key over 128 or a value over 1024 bytes.
result<std::optional<registry::label_match>> label_param(const request_context& ctx);

/// The list filter ?name=<part of a model name> (listModels): "" when absent; at most 128 bytes.
result<std::string> name_param(const request_context& ctx);

} // namespace depot::server::api
