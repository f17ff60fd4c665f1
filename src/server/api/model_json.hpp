#pragma once
/// \file
/// The JSON the model registry's REST routes return (teams, members, models, versions, files, aliases,
/// events), and the model's ETag.

#include "registry/service/model_registry.hpp"
#include "server/api/http_api.hpp"

#include <optional>
#include <string>

namespace depot::server::api {

json::object policy_json(const registry::approval_policy& p);
/// `role`: the caller's role in the team, if a member.
json::object team_json(const registry::team& t, std::optional<registry::team_role> role);
json::object member_json(const registry::team_member& m);
json::object model_json(const registry::model& m);
/// A JSON text stored by the registry (labels, metrics, event details); {} if it does not parse.
json::value parse_stored(const std::string& text);
json::object version_json(const registry::model& m, const registry::model_version& v);
json::object file_json(const registry::model_file& f);
json::object alias_json(const registry::model& m, const registry::model_alias& a);
json::object event_json(const registry::model_event& e);

/// "r<revision>": changes whenever the model is updated.
std::string model_etag(const registry::model& m);
/// `res` with the model's ETag.
response with_etag(response res, const registry::model& m);

} // namespace depot::server::api
