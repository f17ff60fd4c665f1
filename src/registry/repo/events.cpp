#include "registry/repo/events.hpp"

#include "common/json.hpp"
#include "registry/repo/sql_util.hpp"

#include <algorithm>

namespace depot::registry::events {

std::string quote(std::string_view s)
{
    return json_quote(s);
}

asio::awaitable<std::int64_t> emit(pg::connection& c, const event_spec& e)
{
    if (!e.ordering_key.empty())
        co_await sql(c, "SELECT pg_advisory_xact_lock(hashtextextended($1, 8))",
                     "depot-events:" + e.ordering_key);
    std::optional<std::string> key;
    if (!e.ordering_key.empty())
        key = e.ordering_key;
    const std::string type(e.type);
    // One statement: the event, its fan-out to the matching enabled subscriptions, and the NOTIFY (only when
    // some subscription gets it). Model events reach the team's subscriptions (narrowed by their model and
    // bucket filters); bucket events (objects, snapshots) reach subscriptions filtered on that bucket.
    auto rs = co_await sql(
        c,
        "WITH e AS (INSERT INTO events (seq, type, team_id, model_id, version_id, bucket_id, ordering_key, "
        "payload) VALUES (nextval('event_seq'), $1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING *), "
        "d AS (INSERT INTO webhook_deliveries (event_id, subscription_id, ordering_key, seq) "
        "SELECT e.id, s.id, e.ordering_key, e.seq FROM e JOIN webhook_subscriptions s ON s.enabled AND "
        "CASE WHEN $8::bigint IS NOT NULL THEN s.id = $8::bigint ELSE "
        "(cardinality(s.event_types) = 0 OR e.type = ANY (s.event_types)) AND "
        "((e.team_id IS NOT NULL AND s.team_id = e.team_id AND (s.model_id IS NULL OR s.model_id = "
        "e.model_id) AND (s.bucket_id IS NULL OR s.bucket_id = e.bucket_id)) OR "
        "(e.team_id IS NULL AND s.bucket_id = e.bucket_id)) END RETURNING 1) "
        "SELECT (SELECT id FROM e), (SELECT count(*) FROM (SELECT pg_notify('depot_events', '') FROM "
        "(SELECT 1 FROM d LIMIT 1) one) n)",
        type, e.team_id, e.model_id, e.version_id, e.bucket_id, key, e.data_json, e.only_subscription);
    co_return rs[0].i64(0);
}

asio::awaitable<void> lock_model(pg::connection& c, std::int64_t model_id)
{
    co_await sql(c, "SELECT pg_advisory_xact_lock(hashtextextended($1, 8))",
                 "depot-events:m" + std::to_string(model_id));
}

asio::awaitable<std::int64_t> emit_model_event(pg::connection& c, std::string_view type, std::int64_t team_id,
                                               std::int64_t model_id, std::int64_t bucket_id,
                                               std::optional<std::int64_t> version_id, std::string data_json)
{
    event_spec e{.type = type,
                 .team_id = team_id,
                 .model_id = model_id,
                 .version_id = version_id,
                 .bucket_id = bucket_id,
                 .ordering_key = "m" + std::to_string(model_id),
                 .data_json = std::move(data_json)};
    co_return co_await emit(c, e);
}

asio::awaitable<void> emit_object_event(pg::connection& c, std::string_view type, std::int64_t bucket_id,
                                        std::string_view key, std::string_view version_id, std::uint64_t size,
                                        std::string_view etag, std::string_view actor)
{
    auto rs = co_await sql(c, "SELECT name FROM buckets WHERE id = $1 AND object_events", bucket_id);
    if (rs.empty())
        co_return;
    co_await emit_object_event(c, rs[0].str(0), type, bucket_id, key, version_id, size, etag, actor);
}

asio::awaitable<void> emit_object_event(pg::connection& c, std::string_view bucket_name,
                                        std::string_view type, std::int64_t bucket_id, std::string_view key,
                                        std::string_view version_id, std::uint64_t size,
                                        std::string_view etag, std::string_view actor)
{
    boost::json::object data;
    data["actor"] = json_string(actor);
    data["bucket"] = json_string(bucket_name);
    if (type == "object.created")
        data["etag"] = json_string("\"" + std::string(etag) + "\"");
    data["key"] = json_string(key);
    if (type == "object.created")
        data["size"] = size;
    data["version_id"] = json_string(version_id);
    event_spec e{.type = type,
                 .bucket_id = bucket_id,
                 .ordering_key = "o" + std::to_string(bucket_id) + "/" + std::string(key),
                 .data_json = boost::json::serialize(data)};
    co_await emit(c, e);
}

} // namespace depot::registry::events
