#pragma once
/// \file
/// Webhook subscriptions, deliveries and attempts as the registry reports them
/// (registry/service/webhooks.hpp), and what the dispatcher claims and records.

#include "registry/types.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

struct webhook_subscription
{
    std::int64_t id = 0;
    std::int64_t team_id = 0;
    std::string url;
    std::string description;
    std::vector<std::string> event_types; ///< empty = all
    std::optional<std::string> model;     ///< model filter (name in the team)
    std::optional<std::string> bucket;    ///< bucket filter
    bool enabled = true;
    std::optional<std::string> disabled_reason;
    int consecutive_failures = 0;
    std::optional<time_point> previous_secret_expires_at; ///< set while a rotated-out secret still signs
    std::string created_by;
    time_point created_at;
    time_point updated_at;
};

struct webhook_spec
{
    std::string url;
    std::string description;
    std::vector<std::string> event_types;
    std::optional<std::int64_t> model_id;
    std::optional<std::int64_t> bucket_id;
};

struct webhook_update
{
    std::optional<std::string> url;
    std::optional<std::string> description;
    std::optional<std::vector<std::string>> event_types;
    std::optional<bool> enabled;
    /// A new bucket filter; the caller checks that it may see that bucket.
    std::optional<std::int64_t> bucket_id;
};

struct webhook_attempt
{
    int number = 0;
    std::string instance;
    time_point started_at;
    std::optional<int> status;
    int latency_ms = 0;
    std::string response_excerpt;
    std::optional<std::string> error;
};

struct webhook_delivery
{
    std::int64_t id = 0;
    std::int64_t event_id = 0;
    std::string event_type;
    std::string state; ///< pending, delivering, delivered, failed
    int attempts = 0;
    time_point next_attempt_at;
    std::optional<int> last_status;
    std::optional<std::string> last_error;
    time_point created_at;
    std::optional<time_point> delivered_at;
    std::vector<webhook_attempt> attempt_log; ///< filled by `delivery` only
};

/// A delivery a dispatcher has leased for one attempt.
struct claimed_delivery
{
    std::int64_t id = 0;
    int attempt = 0; ///< this attempt's number (1 = first)
    std::int64_t subscription_id = 0;
    std::int64_t team_id = 0;
    std::string url;
    std::vector<std::string> secrets; ///< current first, then the previous one during a rotation
    std::int64_t event_id = 0;
    std::string event_type;
    std::string data_json;
    time_point event_created_at;
    std::optional<std::int64_t> version_id;
    std::optional<std::string> team_name;
};

/// How an attempt went, as the dispatcher saw it.
struct attempt_outcome
{
    bool ok = false;
    std::optional<int> status;
    int latency_ms = 0;
    std::string response_excerpt;
    std::optional<std::string> error;
    time_point started_at;
};

struct retry_policy
{
    std::chrono::seconds base{10};
    std::chrono::seconds max{3600};
    std::chrono::seconds max_age{3 * 24 * 3600};
    unsigned failure_limit = 20;
};

/// One file of a version's manifest, for event payloads.
struct manifest_entry
{
    std::string path;
    std::uint64_t size = 0;
    std::string sha256; ///< raw; empty when not known yet
};

struct version_ref
{
    std::string team;
    std::string model;
    int number = 0;
};

/// Deliveries not yet delivered or given up, and the age of the oldest: the queue the metrics show.
struct webhook_queue_state
{
    std::int64_t depth = 0;
    double oldest_seconds = 0;
};

} // namespace depot::registry
