#pragma once
/// \file
/// S3 Object Lock on the wire: the bucket's ObjectLockConfiguration (PutObjectLockConfiguration), a
/// version's Retention and LegalHold documents, and the x-amz-object-lock-* headers of the writes
/// (PutObject, CopyObject, CreateMultipartUpload). Only syntax and S3's rules for each document here; what
/// a lock forbids is enforced by the registry (registry/repo/object_lock.hpp).

#include "common/http_date.hpp"
#include "common/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace depot::s3 {

/// GOVERNANCE: whoever may bypass governance retention can shorten or remove it and delete the version;
/// COMPLIANCE: nobody can, until the date.
enum class retention_mode
{
    governance,
    compliance
};

std::string_view to_string(retention_mode m) noexcept;
/// "GOVERNANCE" or "COMPLIANCE" exactly (S3 is case-sensitive here); nullopt otherwise.
std::optional<retention_mode> parse_retention_mode(std::string_view text) noexcept;

/// A bucket's DefaultRetention: exactly one of days and years, positive.
struct default_retention
{
    retention_mode mode = retention_mode::governance;
    int days = 0;
    int years = 0;
};

/// The ObjectLockConfiguration document (ObjectLockEnabled is always "Enabled": S3 accepts no other value
/// and Object Lock, once on, stays on).
struct object_lock_configuration
{
    std::optional<default_retention> rule;
};

/// The longest default retention S3 accepts (100 years, or 36500 days).
inline constexpr int max_retention_years = 100;
inline constexpr int max_retention_days = 36500;

/// Parses `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>
/// <Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`.
/// Errors: malformed_xml on bad XML, an ObjectLockEnabled missing or other than "Enabled", a Rule without
/// DefaultRetention, a DefaultRetention without Mode or with both or neither of Days and Years, a
/// non-numeric period or an unknown Mode; invalid_argument for a period that is not positive or above the
/// maximum.
result<object_lock_configuration> parse_object_lock_configuration(std::string_view body);
/// The GetObjectLockConfiguration document of an Object Lock bucket.
std::string object_lock_configuration_xml(const std::optional<default_retention>& rule);

/// A version's retention (PutObjectRetention, x-amz-object-lock-mode + -retain-until-date).
struct retention
{
    retention_mode mode = retention_mode::governance;
    time_point retain_until{};
};

/// Parses `<Retention><Mode>..</Mode><RetainUntilDate>..</RetainUntilDate></Retention>`. An empty
/// Retention (neither element) is nullopt: it removes the retention (governance with bypass only).
/// Errors: malformed_xml on bad XML, an unknown Mode, one of the two elements without the other, or a date
/// that is not ISO 8601.
result<std::optional<retention>> parse_retention(std::string_view body);
std::string retention_xml(const retention& r);

/// Parses `<LegalHold><Status>ON|OFF</Status></LegalHold>`: true for ON. Errors: malformed_xml.
result<bool> parse_legal_hold(std::string_view body);
std::string legal_hold_xml(bool on);

/// The lock headers of a write, as sent (nullopt: absent).
struct lock_headers
{
    std::optional<std::string_view> mode;
    std::optional<std::string_view> retain_until;
    std::optional<std::string_view> legal_hold;
};

/// What a write asks for with its lock headers.
struct requested_lock
{
    std::optional<s3::retention> retention;
    std::optional<bool> legal_hold;

    bool any() const noexcept { return retention.has_value() || legal_hold.has_value(); }
};

/// Validates the x-amz-object-lock-* headers as S3 does: mode and date both or neither (invalid_argument),
/// a known mode (invalid_argument "Unknown wormMode directive."), an ISO 8601 date after `now`
/// (invalid_argument), a legal hold ON or OFF (invalid_argument).
result<requested_lock> parse_lock_headers(const lock_headers& h, time_point now);

} // namespace depot::s3
