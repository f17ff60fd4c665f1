#pragma once
/// \file
/// The registry's words that callers outside it need, without its SQL: a bucket's versioning modes and
/// version ids, the event types and NOTIFY channels, warm-up triggers, webhook secrets and signatures, and
/// the audit outcomes. Pure functions only; the repositories (registry/repo/, internal to the registry) and
/// the services (registry/service/) use the same definitions.

#include "auth/scope.hpp"
#include "registry/types.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

/// Scoped credentials (what a scope is and allows: auth/scope.hpp and auth/authorize.hpp), named here.
using auth::alias_reads_frozen_file;
using auth::area_of;
using auth::area_reaches;
using credential_scope = auth::access_scope;
using auth::model_location;
using auth::parse_scope;
using auth::scope_area;
using auth::scope_json;

/// A bucket's S3 versioning state (buckets.versioning).
enum class versioning_mode
{
    unversioned, ///< never versioned: a write replaces the key's only version
    enabled,     ///< every write adds a version; replaced versions are kept
    suspended,   ///< writes create the 'null' version, replacing an earlier 'null' version of the key
};

/// "unversioned", "enabled" or "suspended" (as stored); anything else reads as unversioned.
versioning_mode versioning_mode_of(std::string_view stored) noexcept;
std::string_view to_string(versioning_mode mode) noexcept;

/// True for "null" and for ids the registry makes (make_version_id: 16 hex digits of the version's
/// created_seq, then 16 random hex digits); S3 answers InvalidArgument for anything else.
bool is_valid_version_id(std::string_view id) noexcept;

/// The NOTIFY channel warm-up workers LISTEN on.
inline constexpr std::string_view warmup_channel = "depot_warmups";

/// True for the entries a warm-up policy (warmup_on list) may hold: "version.approved", "alias.updated"
/// (any alias) or "alias.updated:<alias>".
bool is_warmup_trigger(std::string_view entry) noexcept;

/// A fresh webhook secret: "whsec_" + base64 of 24 random bytes (Standard Webhooks).
std::string new_webhook_secret();

/// The Standard Webhooks signature header value: "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>" per
/// secret, separated by spaces. The HMAC key is the base64 after "whsec_".
std::string webhook_signature(const std::vector<std::string>& secrets, std::string_view id,
                              std::string_view timestamp, std::string_view body);

/// The ids of the users depotd makes for itself, one per team whose events carry presigned links. Nobody
/// else may take one, and none joins a team but its own: the team would adopt that account as a reader of
/// its models.
inline constexpr std::string_view event_link_user_prefix = "depot-events.";

/// The context of work no request caused: actor "system".
const audit_context& system_audit_context();

/// Audit outcomes.
inline constexpr std::string_view audit_allowed = "allowed";
inline constexpr std::string_view audit_denied = "denied";
inline constexpr std::string_view audit_failed = "failed";

/// A JSON string literal of `s` (for building audit details).
std::string audit_quote(std::string_view s);

} // namespace depot::registry

namespace depot::registry::events {

/// Every event type a subscription can filter on (what each carries: registry/repo/events.hpp).
inline constexpr std::array<std::string_view, 16> event_types = {
    "model.created",    "version.created",    "version.submitted", "version.approved",
    "version.rejected", "version.deprecated", "version.archived",  "alias.updated",
    "snapshot.created", "object.created",     "object.deleted",    "warmup.completed",
    "warmup.failed",    "webhook.ping",       "webhook.disabled",  "webhook.enabled"};

bool is_event_type(std::string_view type) noexcept;

/// The NOTIFY channel webhook dispatchers LISTEN on.
inline constexpr std::string_view channel = "depot_events";

} // namespace depot::registry::events
