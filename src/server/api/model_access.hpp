#pragma once
/// \file
/// The team, model and version a model-registry route names in its path, once the caller may do the route's
/// permission in the team (server/authorization.hpp authorize_team). not_found for a missing model or
/// version.

#include "registry/service/model_registry.hpp"
#include "server/api/http_api.hpp"
#include "server/authorization.hpp"

#include <boost/asio/awaitable.hpp>
#include <chrono>

namespace depot::server::api {

/// The team named in the path, if the caller may do the route's permission in it (authorize_team).
asio::awaitable<result<team_access>> team_for(request_context& ctx, const path_params& params);

struct model_access
{
    team_access team;
    registry::model model;
};

asio::awaitable<result<model_access>> model_for(request_context& ctx, const path_params& params);

struct version_access
{
    model_access model;
    registry::model_version version;
};

/// The version by number, label or alias.
asio::awaitable<result<version_access>> version_for(request_context& ctx, const path_params& params);

/// The longest a presigned link handed to a caller lives (getFileDownloadLink, a manifest's links).
inline constexpr std::chrono::seconds max_link_lifetime{3600};

/// `wanted` (at most max_link_lifetime), ending no later than the caller's key or token (and lasting at
/// least a second): a link outlives no credential.
std::chrono::seconds link_lifetime_for(const request_context& ctx, std::chrono::seconds wanted);

} // namespace depot::server::api
