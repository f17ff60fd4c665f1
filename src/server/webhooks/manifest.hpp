#pragma once
/// \file
/// A version's manifest with presigned GET URLs: what version events carry (dispatcher.hpp) and what the
/// REST call getVersionManifest returns, for platforms that want URLs rather than credentials. Each file's
/// URL points into the S3 model view at the version's number and is signed by the team's event-link key: a
/// team reader of its own ("depot-events.<team>"), created on first use, so a URL reads that team's models
/// and nothing else, and its downloads are audited under that user.

#include "common/json.hpp"
#include "server/services.hpp"

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace depot::server::webhooks {

namespace asio = boost::asio;

/// Largest number of files a manifest lists (with a presigned URL each).
inline constexpr std::size_t max_manifest_files = 10000;

struct link_key
{
    std::string access_key_id;
    std::string secret;
};

/// "http://host:port" of the installation as clients reach it: --public-url, else the listen address
/// (0.0.0.0 and * read as 127.0.0.1).
std::string public_base(const config::options& o);

/// A file of a version in the S3 model view: <models bucket>/team/model/number/path.
struct file_ref
{
    std::string_view team;
    std::string_view model;
    int number = 0;
    std::string_view path;
};

/// A presigned GET URL of `file`, signed by `key` at `now`, valid for `expiry` (1 s .. 7 days).
std::string presigned_file_url(const config::options& o, const link_key& key, const file_ref& file,
                               std::chrono::seconds expiry, registry::time_point now);

/// The team's event-link key, created (user, membership, key) on first use; nullopt if it cannot be made.
/// Safe against other depotd processes doing the same: one key wins, the others are revoked.
asio::awaitable<std::optional<link_key>> team_link_key(services& svc, std::int64_t team_id,
                                                       std::string_view team);

/// The key to sign a version's URLs with, given the version's team name (nullopt: no URLs).
using key_source = std::function<asio::awaitable<std::optional<link_key>>(const std::string& team)>;

/// Adds the manifest of version `version_id` to `data`: "files" (path, size, sha256 hex or null, and "url"
/// when a key is given), "files_truncated", "urls_expire_at" (with URLs) and "s3_prefix". URLs are valid for
/// --event-url-expiry (at most seven days) from now, or at most `lifetime` when given.
asio::awaitable<void> add_manifest(services& svc, std::int64_t version_id, const key_source& key,
                                   boost::json::object& data,
                                   std::optional<std::chrono::seconds> lifetime = std::nullopt);

} // namespace depot::server::webhooks
