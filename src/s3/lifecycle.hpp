#pragma once
/// \file
/// Bucket lifecycle configurations (PutBucketLifecycleConfiguration, GetBucketLifecycleConfiguration) with
/// S3's validation, and the arithmetic of when a rule's actions fall due. What the cleanup task does with
/// them is registry/service/lifecycle.hpp.
/// https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketLifecycleConfiguration.html
///
/// Depot has one storage class: Transition and NoncurrentVersionTransition answer 501 NotImplemented.

#include "common/http_date.hpp"
#include "common/result.hpp"
#include "s3/types.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::s3 {

/// Which objects a rule applies to: all of the set conditions hold.
struct lifecycle_filter
{
    std::string prefix;
    std::optional<std::uint64_t> size_greater_than; ///< ObjectSizeGreaterThan (exclusive)
    std::optional<std::uint64_t> size_less_than;    ///< ObjectSizeLessThan (exclusive)
    /// Filter/Tag or And/Tag: the object's tags include every one of these (key and value); keys unique.
    std::vector<tag> tags;

    /// How the rule stated it, so that GetBucketLifecycleConfiguration answers in the same shape.
    enum class form
    {
        legacy_prefix, ///< <Rule><Prefix>, outside any Filter
        filter,        ///< <Filter> with at most one predicate (or none: every object)
        filter_and,    ///< <Filter><And>
    } shape = form::filter;
    bool has_prefix = false; ///< a Prefix element was given (possibly empty)

    /// Whether an object version with this key, size and tag set is selected. The cleanup selects in SQL
    /// (registry/repo/lifecycle_repository.cpp); this states the same rule.
    bool matches(std::string_view key, std::uint64_t size, const std::vector<tag>& object_tags) const;
};

struct lifecycle_rule
{
    std::string id;
    bool enabled = false;
    lifecycle_filter filter;
    /// Expiration: exactly one of these when `has_expiration`.
    bool has_expiration = false;
    std::optional<int> expiration_days;
    std::optional<time_point> expiration_date; ///< midnight UTC
    std::optional<bool> expired_object_delete_marker;
    /// NoncurrentVersionExpiration.
    std::optional<int> noncurrent_days;
    std::optional<int> newer_noncurrent_versions;
    /// AbortIncompleteMultipartUpload.
    std::optional<int> abort_days_after_initiation;
};

struct lifecycle_configuration
{
    std::vector<lifecycle_rule> rules; ///< 1..1000, IDs unique
};

inline constexpr std::size_t max_lifecycle_rules = 1000;
inline constexpr std::size_t max_lifecycle_rule_id = 255;
inline constexpr int max_newer_noncurrent_versions = 100;

/// Parses and validates a LifecycleConfiguration body as S3 does: MalformedXML for bad XML, no or more than
/// 1000 rules, a Status other than Enabled/Disabled, a rule with both or neither of Filter and the legacy
/// Prefix, a Filter with more than one predicate, an Expiration with other than exactly one of Days, Date
/// and ExpiredObjectDeleteMarker; InvalidArgument for an ID longer than 255 characters or used twice, a
/// non-positive Days / NoncurrentDays / DaysAfterInitiation, a Date not at midnight UTC, sizes that
/// select nothing; InvalidTag for a filter tag breaking S3's tag rules (key of 1 to 128, value of up to
/// 256 Unicode characters); InvalidRequest for a rule without action, a tag key twice in one filter, and
/// AbortIncompleteMultipartUpload or ExpiredObjectDeleteMarker with a tag filter; NotImplemented for
/// transitions. A rule without ID gets a generated one, as S3 does.
result<lifecycle_configuration> parse_lifecycle_configuration(std::string_view body);

/// The configuration as GetBucketLifecycleConfiguration returns it (also what Depot stores).
std::string lifecycle_configuration_xml(const lifecycle_configuration& config);

/// Lifecycle days are counted as S3 does: an object `days` old (from its last modification, its becoming
/// noncurrent, an upload's initiation) is due at the next midnight UTC after start + days. With a testing day
/// (--lifecycle-day-seconds other than 86400) exactly `days` × `day` after the start.
/// The latest start that is due at `now`: something started at `start` is due iff start <= the cutoff.
time_point lifecycle_cutoff(time_point now, int days, std::chrono::seconds day);

} // namespace depot::s3
