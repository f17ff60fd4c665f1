#pragma once
/// \file
/// Scoped credentials: what an access key or API token is narrowed to (schema/0008_audit.sql). A scope only
/// narrows what the user's roles allow; it never grants. Stored as a JSON object:
///   {"read_only": true, "bucket": "b", "prefix": "p/", "model": "team/model", "alias": "production"}
/// every member optional. `model` limits S3 access to the model's bucket prefix and its read-only view
/// (s3://<models bucket>/team/model/...); `alias` (with `model`) further to the files of the version the
/// alias points to when the request is made, and implies read_only. Pure: no I/O; what a scope allows is
/// decided by auth::authorize (authorize.hpp), which uses these.

#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace depot::auth {

struct access_scope
{
    bool read_only = false;
    std::string bucket;
    std::string prefix;
    std::string team;  ///< of `model`
    std::string model; ///< the model's name (without the team)
    std::string alias;

    bool unrestricted() const noexcept
    {
        return !read_only && bucket.empty() && prefix.empty() && model.empty() && alias.empty();
    }
};

/// Parses a stored or requested scope ("" = unrestricted). invalid_argument naming the member otherwise:
/// unknown members, wrong types, prefix without bucket, alias without model, model and bucket together.
result<access_scope> parse_scope(std::string_view json);

/// The canonical JSON object of a scope ("" when unrestricted).
std::string scope_json(const access_scope& s);

/// Where a model's files live.
struct model_location
{
    std::int64_t model_id = 0;
    std::string bucket;
    std::string prefix;
};

/// The part of the bucket namespace a scope confines data access to: keys under `prefix` in `bucket`.
/// `bucket` empty: nothing at all (a model scope whose model no longer exists).
struct scope_area
{
    std::string bucket;
    std::string prefix;
};

/// The area of a scope; nullopt when the scope confines to no bucket (unrestricted, or read_only alone).
/// `model` is where the scope's model lives (locate_model), null when it does not exist; unused by scopes
/// without a model. An alias scope's area is its model's, but inside it an alias reads only frozen files
/// (alias_reads_frozen_file). Pure: the one place this rule lives (both S3 and REST ask it).
std::optional<scope_area> area_of(const access_scope& s, const model_location* model);

/// Whether every key that starts with `key_prefix` in `bucket` is inside the area (for one key: the key
/// itself). Pure.
bool area_reaches(const scope_area& area, std::string_view bucket, std::string_view key_prefix);

/// Whether an alias-scoped credential may perform S3 `operation` at a path of the model's bucket: only
/// GetObject and HeadObject, of no particular object version, which then serve the frozen file of the
/// aliased version (never the live object). Pure.
bool alias_reads_frozen_file(std::string_view operation, bool version_id_given);

} // namespace depot::auth
