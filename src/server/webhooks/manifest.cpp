#include "server/webhooks/manifest.hpp"

#include "auth/sigv4.hpp"
#include "common/hash.hpp"
#include "common/uri.hpp"
#include "registry/service/webhooks.hpp"
#include "registry/vocabulary.hpp"
#include "server/api/http_api.hpp"

#include <algorithm>

namespace depot::server::webhooks {

std::string public_base(const config::options& o)
{
    std::string base = o.public_url;
    if (base.empty()) {
        std::string listen = o.listen;
        if (listen.starts_with("0.0.0.0:") || listen.starts_with("*:"))
            listen = "127.0.0.1" + listen.substr(listen.find(':'));
        base = (o.tls_cert_file.empty() ? "http://" : "https://") + listen;
    }
    while (base.ends_with('/'))
        base.pop_back();
    return base;
}

std::string presigned_file_url(const config::options& o, const link_key& key, const file_ref& file,
                               std::chrono::seconds expiry, registry::time_point now)
{
    const std::string base = public_base(o);
    const std::string host = base.substr(base.find("://") + 3);
    const std::string target = "/" + uri_encode(o.models_bucket) + "/" + uri_encode(file.team) + "/" +
                               uri_encode(file.model) + "/" + std::to_string(file.number) + "/" +
                               uri_encode(file.path, true);
    auth::sign_options so{.access_key_id = key.access_key_id,
                          .secret = key.secret,
                          .region = o.region,
                          .service = "s3",
                          .now = now};
    return base + auth::presign("GET", target, host, expiry, so);
}

asio::awaitable<std::optional<link_key>> team_link_key(services& svc, std::int64_t team_id,
                                                       std::string_view team)
{
    auto& repo = *svc.webhooks;
    for (int round = 0; round < 2; ++round) {
        if (auto recorded = co_await repo.event_key_of(team_id)) {
            auto key = co_await svc.credentials.find_active_key(*recorded);
            if (key)
                co_return link_key{key->access_key_id, key->secret};
            co_await repo.forget_event_key(team_id);
        }
        // A team reader of its own: the URLs it signs can read this team's models and nothing else.
        const std::string signer = std::string(registry::event_link_user_prefix) + std::string(team);
        co_await svc.credentials.create_event_link_user(team); // already_exists from an earlier round is fine
        co_await svc.models.admit_event_link_user(team_id, team);
        auto created = co_await svc.credentials.create_key(registry::system_audit_context(), signer);
        if (!created)
            co_return std::nullopt;
        if (co_await repo.claim_event_key(team_id, created->access_key_id))
            co_return link_key{created->access_key_id, created->secret};
        co_await svc.credentials.revoke_key(registry::system_audit_context(),
                                            created->access_key_id); // another depotd won the race
    }
    co_return std::nullopt;
}

asio::awaitable<void> add_manifest(services& svc, std::int64_t version_id, const key_source& key_for,
                                   boost::json::object& data, std::optional<std::chrono::seconds> lifetime)
{
    auto& repo = *svc.webhooks;
    auto ref = co_await repo.version_of(version_id);
    auto files = co_await repo.manifest(version_id, max_manifest_files + 1);
    std::optional<link_key> key;
    if (ref)
        key = co_await key_for(ref->team);
    const auto now = std::chrono::system_clock::now();
    auto expiry = std::min(svc.opts.event_url_expiry, auth::max_presigned_expiry);
    if (lifetime)
        expiry = std::min(expiry, std::chrono::duration_cast<decltype(expiry)>(*lifetime));
    boost::json::array list;
    const bool truncated = files.size() > max_manifest_files;
    if (truncated)
        files.resize(max_manifest_files);
    for (const auto& f : files) {
        boost::json::object entry;
        entry["path"] = json_string(f.path);
        entry["size"] = f.size;
        entry["sha256"] =
            f.sha256.empty() ? boost::json::value(nullptr) : boost::json::value(to_hex(f.sha256));
        if (ref && key)
            entry["url"] =
                presigned_file_url(svc.opts, *key, {ref->team, ref->model, ref->number, f.path}, expiry, now);
        list.push_back(std::move(entry));
    }
    data["files"] = std::move(list);
    data["files_truncated"] = truncated;
    if (ref && key)
        data["urls_expire_at"] = api::iso8601(now + expiry);
    if (ref)
        data["s3_prefix"] = json_string("s3://" + svc.opts.models_bucket + "/" + ref->team + "/" +
                                        ref->model + "/" + std::to_string(ref->number) + "/");
}

} // namespace depot::server::webhooks
