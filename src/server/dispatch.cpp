// Request dispatch: addressing (path-style and virtual-hosted-style), authentication, the S3 route table,
// and the single place where errors and exceptions become S3 error responses.
#include "common/log.hpp"
#include "common/strings.hpp"
#include "common/uri.hpp"
#include "registry/pg/pg.hpp"
#include "s3/request_headers.hpp"
#include "s3/utf8.hpp"
#include "server/api/api.hpp"
#include "server/audit_requests.hpp"
#include "server/authenticate.hpp"
#include "server/authorization.hpp"
#include "server/console.hpp"
#include "server/errors.hpp"
#include "server/health.hpp"
#include "server/hf/hf.hpp"
#include "server/metrics_endpoint.hpp"
#include "server/metrics_requests.hpp"
#include "server/pipeline.hpp"
#include "server/s3/common.hpp"
#include "server/s3/expected_bucket_owner.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/post_object.hpp"
#include "server/services.hpp"
#include "server/session.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/this_coro.hpp>
#include <chrono>

namespace depot::server {
namespace {

enum class scope
{
    service,
    bucket,
    object
};

struct route
{
    http::verb method;
    scope where;
    std::string_view subresource;      ///< "" = plain request; else a query parameter (or pseudo "copy")
    std::string_view name;             ///< AWS action name, for logs and metrics
    guarded<s3op::handler> fn;         ///< nullptr = NotImplemented; called only with a proof (pipeline.hpp)
    auth::route_permission permission; ///< what the action does (auth/authorize.hpp); required
    route_resource resource;           ///< what it acts on (server/pipeline.hpp); required
};

// Query parameters that select a different operation on the same path (every one of botocore's S3 model:
// tests/e2e/test_request_headers.py sends each operation). A request naming one that has no route gets
// NotImplemented rather than being silently treated as the plain operation: DeleteBucketWebsite must never
// be read as DeleteBucket.
constexpr std::array<std::string_view, 39> subresources = {"abac",
                                                           "accelerate",
                                                           "acl",
                                                           "analytics",
                                                           "attributes",
                                                           "cors",
                                                           "delete",
                                                           "encryption",
                                                           "intelligent-tiering",
                                                           "inventory",
                                                           "legal-hold",
                                                           "lifecycle",
                                                           "list-type",
                                                           "location",
                                                           "logging",
                                                           "metadataConfiguration",
                                                           "metadataInventoryTable",
                                                           "metadataJournalTable",
                                                           "metadataTable",
                                                           "metrics",
                                                           "notification",
                                                           "object-lock",
                                                           "ownershipControls",
                                                           "policy",
                                                           "policyStatus",
                                                           "publicAccessBlock",
                                                           "renameObject",
                                                           "replication",
                                                           "requestPayment",
                                                           "restore",
                                                           "retention",
                                                           "select",
                                                           "session",
                                                           "tagging",
                                                           "torrent",
                                                           "uploads",
                                                           "versioning",
                                                           "versions",
                                                           "website"};

using auth::permission;

constexpr std::array<route, 62> routes = {{
    {http::verb::get, scope::service, "", "ListBuckets", s3op::list_buckets, permission::list_buckets,
     resource_kind::service},
    {http::verb::put, scope::bucket, "", "CreateBucket", s3op::create_bucket, permission::create_bucket,
     resource_kind::new_bucket},
    {http::verb::head, scope::bucket, "", "HeadBucket", s3op::head_bucket, permission::read_bucket,
     resource_kind::bucket},
    {http::verb::delete_, scope::bucket, "", "DeleteBucket", s3op::delete_bucket, permission::delete_bucket,
     resource_kind::bucket},
    {http::verb::get, scope::bucket, "location", "GetBucketLocation", s3op::get_bucket_location,
     permission::read_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "versioning", "GetBucketVersioning", s3op::get_bucket_versioning,
     permission::read_bucket, resource_kind::bucket},
    {http::verb::put, scope::bucket, "versioning", "PutBucketVersioning", s3op::put_bucket_versioning,
     permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "acl", "GetBucketAcl", s3op::get_bucket_acl, permission::read_acl,
     resource_kind::bucket},
    {http::verb::put, scope::bucket, "acl", "PutBucketAcl", s3op::put_bucket_acl, permission::write_acl,
     resource_kind::bucket},
    {http::verb::put, scope::bucket, "publicAccessBlock", "PutPublicAccessBlock",
     s3op::put_public_access_block, permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "publicAccessBlock", "GetPublicAccessBlock",
     s3op::get_public_access_block, permission::read_bucket_acl, resource_kind::bucket},
    {http::verb::delete_, scope::bucket, "publicAccessBlock", "DeletePublicAccessBlock",
     s3op::delete_public_access_block, permission::configure_bucket, resource_kind::bucket},
    {http::verb::put, scope::bucket, "ownershipControls", "PutBucketOwnershipControls",
     s3op::put_bucket_ownership_controls, permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "ownershipControls", "GetBucketOwnershipControls",
     s3op::get_bucket_ownership_controls, permission::read_bucket_acl, resource_kind::bucket},
    {http::verb::delete_, scope::bucket, "ownershipControls", "DeleteBucketOwnershipControls",
     s3op::delete_bucket_ownership_controls, permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "list-type", "ListObjectsV2", s3op::list_objects_v2,
     permission::list_objects, resource_kind::bucket},
    {http::verb::get, scope::bucket, "", "ListObjects", s3op::list_objects, permission::list_objects,
     resource_kind::bucket},
    {http::verb::get, scope::bucket, "versions", "ListObjectVersions", s3op::list_object_versions,
     permission::list_object_versions, resource_kind::bucket},
    {http::verb::get, scope::bucket, "uploads", "ListMultipartUploads", s3op::list_multipart_uploads,
     permission::list_uploads, resource_kind::bucket},
    {http::verb::post, scope::bucket, "delete", "DeleteObjects", s3op::delete_objects,
     permission::delete_objects, resource_kind::bucket},
    // A browser form upload: authenticated by its form's signed policy (server/s3/post_object.hpp), then a
    // write of the key the form names, exactly like PutObject's.
    {http::verb::post, scope::bucket, "", "PostObject", s3op::post_object, permission::write_object,
     resource_kind::bucket},
    {http::verb::put, scope::object, "", "PutObject", s3op::put_object, permission::write_object,
     resource_kind::object},
    {http::verb::put, scope::object, "copy", "CopyObject", s3op::copy_object, permission::write_object,
     resource_kind::object},
    {http::verb::get, scope::object, "", "GetObject", s3op::get_object, permission::read_object,
     resource_kind::object},
    {http::verb::head, scope::object, "", "HeadObject", s3op::head_object, permission::read_object,
     resource_kind::object},
    {http::verb::delete_, scope::object, "", "DeleteObject", s3op::delete_object, permission::write_object,
     resource_kind::object},
    {http::verb::get, scope::object, "acl", "GetObjectAcl", s3op::get_object_acl, permission::read_acl,
     resource_kind::object},
    {http::verb::put, scope::object, "acl", "PutObjectAcl", s3op::put_object_acl, permission::write_acl,
     resource_kind::object},
    {http::verb::get, scope::object, "attributes", "GetObjectAttributes", s3op::get_object_attributes,
     permission::read_object_metadata, resource_kind::object},
    {http::verb::post, scope::object, "uploads", "CreateMultipartUpload", s3op::create_multipart_upload,
     permission::write_object, resource_kind::object},
    {http::verb::put, scope::object, "uploadId", "UploadPart", s3op::upload_part, permission::write_object,
     resource_kind::object},
    {http::verb::put, scope::object, "uploadId+copy", "UploadPartCopy", s3op::upload_part_copy,
     permission::write_object, resource_kind::object},
    {http::verb::post, scope::object, "uploadId", "CompleteMultipartUpload", s3op::complete_multipart_upload,
     permission::write_object, resource_kind::object},
    {http::verb::delete_, scope::object, "uploadId", "AbortMultipartUpload", s3op::abort_multipart_upload,
     permission::write_object, resource_kind::object},
    {http::verb::get, scope::object, "uploadId", "ListParts", s3op::list_parts,
     permission::read_object_metadata, resource_kind::object},
    {http::verb::get, scope::object, "tagging", "GetObjectTagging", s3op::get_object_tagging,
     permission::read_object_metadata, resource_kind::object},
    {http::verb::put, scope::object, "tagging", "PutObjectTagging", s3op::put_object_tagging,
     permission::write_object_metadata, resource_kind::object},
    {http::verb::delete_, scope::object, "tagging", "DeleteObjectTagging", s3op::delete_object_tagging,
     permission::write_object_metadata, resource_kind::object},
    {http::verb::get, scope::bucket, "tagging", "GetBucketTagging", s3op::get_bucket_tagging,
     permission::read_bucket_acl, resource_kind::bucket},
    {http::verb::put, scope::bucket, "tagging", "PutBucketTagging", s3op::put_bucket_tagging,
     permission::configure_bucket, resource_kind::bucket},
    {http::verb::delete_, scope::bucket, "tagging", "DeleteBucketTagging", s3op::delete_bucket_tagging,
     permission::configure_bucket, resource_kind::bucket},
    {http::verb::put, scope::bucket, "cors", "PutBucketCors", s3op::put_bucket_cors,
     permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "cors", "GetBucketCors", s3op::get_bucket_cors,
     permission::read_bucket_acl, resource_kind::bucket},
    {http::verb::delete_, scope::bucket, "cors", "DeleteBucketCors", s3op::delete_bucket_cors,
     permission::configure_bucket, resource_kind::bucket},
    {http::verb::put, scope::bucket, "lifecycle", "PutBucketLifecycleConfiguration",
     s3op::put_bucket_lifecycle, permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "lifecycle", "GetBucketLifecycleConfiguration",
     s3op::get_bucket_lifecycle, permission::read_bucket_acl, resource_kind::bucket},
    {http::verb::delete_, scope::bucket, "lifecycle", "DeleteBucketLifecycle", s3op::delete_bucket_lifecycle,
     permission::configure_bucket, resource_kind::bucket},
    {http::verb::put, scope::bucket, "object-lock", "PutObjectLockConfiguration",
     s3op::put_object_lock_configuration, permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "object-lock", "GetObjectLockConfiguration",
     s3op::get_object_lock_configuration, permission::read_bucket_acl, resource_kind::bucket},
    {http::verb::put, scope::object, "retention", "PutObjectRetention", s3op::put_object_retention,
     permission::write_object_lock, resource_kind::object},
    {http::verb::get, scope::object, "retention", "GetObjectRetention", s3op::get_object_retention,
     permission::read_object_metadata, resource_kind::object},
    {http::verb::put, scope::object, "legal-hold", "PutObjectLegalHold", s3op::put_object_legal_hold,
     permission::write_object_lock, resource_kind::object},
    {http::verb::get, scope::object, "legal-hold", "GetObjectLegalHold", s3op::get_object_legal_hold,
     permission::read_object_metadata, resource_kind::object},
    {http::verb::put, scope::bucket, "encryption", "PutBucketEncryption", s3op::put_bucket_encryption,
     permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "encryption", "GetBucketEncryption", s3op::get_bucket_encryption,
     permission::read_bucket_acl, resource_kind::bucket},
    {http::verb::delete_, scope::bucket, "encryption", "DeleteBucketEncryption",
     s3op::delete_bucket_encryption, permission::configure_bucket, resource_kind::bucket},
    // Only the bucket's owner and installation admins, whatever a policy says (auth::is_policy_management).
    {http::verb::put, scope::bucket, "policy", "PutBucketPolicy", s3op::put_bucket_policy,
     permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "policy", "GetBucketPolicy", s3op::get_bucket_policy,
     permission::read_bucket_acl, resource_kind::bucket},
    {http::verb::delete_, scope::bucket, "policy", "DeleteBucketPolicy", s3op::delete_bucket_policy,
     permission::configure_bucket, resource_kind::bucket},
    {http::verb::get, scope::bucket, "policyStatus", "GetBucketPolicyStatus", s3op::get_bucket_policy_status,
     permission::read_bucket_acl, resource_kind::bucket},
    // Browsers' CORS preflights: unauthenticated, whatever the query (run_s3 answers them first).
    {http::verb::options, scope::bucket, "", "PreflightBucket", s3op::cors_preflight,
     permission::cors_preflight, resource_kind::preflight},
    {http::verb::options, scope::object, "", "PreflightObject", s3op::cors_preflight,
     permission::cors_preflight, resource_kind::preflight},
}};

/// Each route's AWS action as bucket policies name it (auth/bucket_policy.hpp), and its form for a request
/// naming a versionId ("" when the same). Every route but the preflights has one
/// (tests/unit/server/route_permissions_test.cpp).
struct route_action
{
    std::string_view route;
    std::string_view action;
    std::string_view version_action = {};
};

constexpr std::array<route_action, 60> route_actions = {{
    {"ListBuckets", "s3:ListAllMyBuckets"},
    {"CreateBucket", "s3:CreateBucket"},
    {"HeadBucket", "s3:ListBucket"},
    {"DeleteBucket", "s3:DeleteBucket"},
    {"GetBucketLocation", "s3:GetBucketLocation"},
    {"GetBucketVersioning", "s3:GetBucketVersioning"},
    {"PutBucketVersioning", "s3:PutBucketVersioning"},
    {"GetBucketAcl", "s3:GetBucketAcl"},
    {"PutBucketAcl", "s3:PutBucketAcl"},
    {"PutPublicAccessBlock", "s3:PutBucketPublicAccessBlock"},
    {"GetPublicAccessBlock", "s3:GetBucketPublicAccessBlock"},
    {"DeletePublicAccessBlock", "s3:PutBucketPublicAccessBlock"},
    {"PutBucketOwnershipControls", "s3:PutBucketOwnershipControls"},
    {"GetBucketOwnershipControls", "s3:GetBucketOwnershipControls"},
    {"DeleteBucketOwnershipControls", "s3:PutBucketOwnershipControls"},
    {"ListObjectsV2", "s3:ListBucket"},
    {"ListObjects", "s3:ListBucket"},
    {"ListObjectVersions", "s3:ListBucketVersions"},
    {"ListMultipartUploads", "s3:ListBucketMultipartUploads"},
    {"DeleteObjects", "s3:DeleteObject"},
    {"PostObject", "s3:PutObject"},
    {"PutObject", "s3:PutObject"},
    {"CopyObject", "s3:PutObject"},
    {"GetObject", "s3:GetObject", "s3:GetObjectVersion"},
    {"HeadObject", "s3:GetObject", "s3:GetObjectVersion"},
    {"DeleteObject", "s3:DeleteObject", "s3:DeleteObjectVersion"},
    {"GetObjectAcl", "s3:GetObjectAcl", "s3:GetObjectVersionAcl"},
    {"PutObjectAcl", "s3:PutObjectAcl", "s3:PutObjectVersionAcl"},
    {"GetObjectAttributes", "s3:GetObjectAttributes", "s3:GetObjectVersionAttributes"},
    {"CreateMultipartUpload", "s3:PutObject"},
    {"UploadPart", "s3:PutObject"},
    {"UploadPartCopy", "s3:PutObject"},
    {"CompleteMultipartUpload", "s3:PutObject"},
    {"AbortMultipartUpload", "s3:AbortMultipartUpload"},
    {"ListParts", "s3:ListMultipartUploadParts"},
    {"GetObjectTagging", "s3:GetObjectTagging", "s3:GetObjectVersionTagging"},
    {"PutObjectTagging", "s3:PutObjectTagging", "s3:PutObjectVersionTagging"},
    {"DeleteObjectTagging", "s3:DeleteObjectTagging", "s3:DeleteObjectVersionTagging"},
    {"GetBucketTagging", "s3:GetBucketTagging"},
    {"PutBucketTagging", "s3:PutBucketTagging"},
    {"DeleteBucketTagging", "s3:PutBucketTagging"},
    {"PutBucketCors", "s3:PutBucketCORS"},
    {"GetBucketCors", "s3:GetBucketCORS"},
    {"DeleteBucketCors", "s3:PutBucketCORS"},
    {"PutBucketLifecycleConfiguration", "s3:PutLifecycleConfiguration"},
    {"GetBucketLifecycleConfiguration", "s3:GetLifecycleConfiguration"},
    {"DeleteBucketLifecycle", "s3:PutLifecycleConfiguration"},
    {"PutObjectLockConfiguration", "s3:PutBucketObjectLockConfiguration"},
    {"GetObjectLockConfiguration", "s3:GetBucketObjectLockConfiguration"},
    {"PutObjectRetention", "s3:PutObjectRetention"},
    {"GetObjectRetention", "s3:GetObjectRetention"},
    {"PutObjectLegalHold", "s3:PutObjectLegalHold"},
    {"GetObjectLegalHold", "s3:GetObjectLegalHold"},
    {"PutBucketEncryption", "s3:PutEncryptionConfiguration"},
    {"GetBucketEncryption", "s3:GetEncryptionConfiguration"},
    {"DeleteBucketEncryption", "s3:PutEncryptionConfiguration"},
    {"PutBucketPolicy", "s3:PutBucketPolicy"},
    {"GetBucketPolicy", "s3:GetBucketPolicy"},
    {"DeleteBucketPolicy", "s3:DeleteBucketPolicy"},
    {"GetBucketPolicyStatus", "s3:GetBucketPolicyStatus"},
}};

// One entry for every route but the two preflights, none left empty.
constexpr bool route_actions_complete()
{
    for (const auto& a : route_actions)
        if (a.route.empty() || a.action.empty())
            return false;
    return route_actions.size() + 2 == routes.size();
}
static_assert(route_actions_complete(), "route_actions must name the action of every S3 route");

/// The route's AWS action ("" when the table has none), in its version form when `version` applies.
std::string_view action_of(std::string_view route_name, bool version)
{
    for (const auto& a : route_actions)
        if (a.route == route_name)
            return version && !a.version_action.empty() ? a.version_action : a.action;
    return {};
}

/// The preflight route for `where` (a service-level OPTIONS counts as a bucket's: it has no bucket).
std::size_t preflight_route(scope where)
{
    for (std::size_t i = 0; i < routes.size(); ++i)
        if (routes[i].method == http::verb::options &&
            routes[i].where == (where == scope::object ? scope::object : scope::bucket))
            return i;
    return routes.size();
}

/// Operation names for metrics and logs: the S3 routes' in order, then "Unknown" (no route matched), then
/// "RestApi" (an /api/v1 request no route matched), then "Console" (the web console's files, console.hpp),
/// then the REST routes' operation ids, then the Hugging Face API's (hf/hf.hpp).
constexpr std::size_t unknown_operation = routes.size();
constexpr std::size_t rest_api_operation = routes.size() + 1;
constexpr std::size_t console_operation = routes.size() + 2;
constexpr std::size_t first_rest_route = routes.size() + 3;

const std::vector<std::string_view>& operation_names()
{
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> out;
        for (const auto& r : routes)
            out.push_back(r.name);
        out.push_back("Unknown");
        out.push_back("RestApi");
        out.push_back("Console");
        for (auto id : api::operation_ids())
            out.push_back(id);
        for (auto name : hf::operation_names())
            out.push_back(name);
        return out;
    }();
    return names;
}

const request_metrics& s3_request_metrics()
{
    static const request_metrics m(operation_names(), metrics::default_registry());
    return m;
}

/// Splits the request into bucket and key: virtual-hosted style when Host is BUCKET.<domain>, else path
/// style.
result<void> resolve_address(request_context& ctx, std::string_view path)
{
    auto decoded = uri_decode(path);
    if (!decoded)
        return make_error(errc::invalid_argument, "The request path has an invalid percent-encoding");
    std::string_view p = *decoded;
    if (p.empty() || p.front() != '/')
        return make_error(errc::invalid_request, "The request path must start with '/'");
    p.remove_prefix(1);

    if (auto vhost = virtual_host_bucket_of(ctx); !vhost.empty()) {
        ctx.bucket = std::string(vhost);
        ctx.key = std::string(p);
        return ok();
    }
    auto slash = p.find('/');
    ctx.bucket = std::string(p.substr(0, slash));
    if (slash != std::string_view::npos)
        ctx.key = std::string(p.substr(slash + 1));
    return ok();
}

/// Bucket, key and query parameters reach PostgreSQL (as keys, prefixes, markers, ...): bytes it cannot hold
/// as text are refused before anything, authentication included, looks them up.
result<void> check_request_text(const request_context& ctx)
{
    if (!s3::is_storable_text(ctx.bucket) || !s3::is_storable_text(ctx.key))
        return make_error(errc::invalid_argument,
                          "The request path must be valid UTF-8 without NUL once percent-decoded");
    for (const auto& [name, value] : ctx.query)
        if (!s3::is_storable_text(name) || !s3::is_storable_text(value))
            return make_error(errc::invalid_argument,
                              "The query parameter '" +
                                  (s3::is_storable_text(name) ? name : std::string("?")) +
                                  "' must be valid UTF-8 without NUL once percent-decoded",
                              s3::is_storable_text(name) ? name : std::string());
    return ok();
}

const route* find_route(const request_context& ctx, scope where, std::string_view& unimplemented)
{
    std::string_view sub;
    if (where == scope::object && ctx.header->method() == http::verb::put && ctx.get("x-amz-copy-source"))
        sub = "copy";
    if (where == scope::object && ctx.has_param("uploadId"))
        sub = sub == "copy" ? "uploadId+copy" : "uploadId";
    for (auto s : subresources)
        if (sub.empty() && ctx.has_param(s))
            sub = s;
    for (const auto& r : routes)
        if (r.method == ctx.header->method() && r.where == where && r.subresource == sub)
            return &r;
    unimplemented = sub;
    return nullptr;
}

/// Whether an unsigned request may run its operation: the reads a public grant can allow (GetObject,
/// HeadObject, the listings, HeadBucket, Get*Acl) of a bucket, never the models view.
bool anonymous_may_try(const request_context& ctx, scope where, auth::permission what)
{
    constexpr std::array<permission, 5> public_reads = {permission::read_object, permission::list_objects,
                                                        permission::list_object_versions,
                                                        permission::read_bucket, permission::read_acl};
    return where != scope::service && !s3op::is_model_view(ctx) &&
           std::find(public_reads.begin(), public_reads.end(), what) != public_reads.end();
}

asio::awaitable<result<response>> run_s3(request_context& ctx, std::size_t& operation)
{
    auto target = ctx.header->target();
    std::string_view raw(target.data(), target.size());
    auto qmark = raw.find('?');
    if (qmark != std::string_view::npos) {
        auto q = parse_query(raw.substr(qmark + 1));
        if (!q)
            co_return make_error(errc::invalid_argument, "The query string has an invalid percent-encoding");
        ctx.query = std::move(*q);
    }
    auto addressed = resolve_address(ctx, raw.substr(0, qmark));
    if (!addressed)
        co_return std::move(addressed).error();
    if (auto text = check_request_text(ctx); !text)
        co_return std::move(text).error();

    const scope where = ctx.bucket.empty() ? scope::service : ctx.key.empty() ? scope::bucket : scope::object;
    if (ctx.header->method() == http::verb::options) {
        operation = preflight_route(where);
        // Unauthenticated, so the failed-authentication cool-down applies, and a preflight that no rule
        // allows (or for a bucket that does not exist) counts as a failure of the address: guessing bucket
        // names through preflights costs what guessing keys does.
        if (auto wait = auth_cooldown(ctx))
            co_return make_error(errc::rate_limited, "Too many failed requests from your address; retry in " +
                                                         std::to_string(wait->count()) + " s.");
        // Through the table, as every handler: the authorization step allows exactly the preflights to run
        // unauthenticated.
        const route& preflight = routes[operation];
        auto proof =
            authorization_step::unauthenticated(preflight.permission.value, preflight.resource.value);
        if (!proof)
            co_return std::move(proof).error();
        auto answer = co_await run_handler(preflight, *proof, ctx);
        if (!answer && answer.error().code == errc::cors_forbidden)
            record_auth_failure(ctx);
        co_return answer;
    }
    std::string_view unimplemented;
    const route* r = find_route(ctx, where, unimplemented);
    operation = r ? static_cast<std::size_t>(r - routes.data()) : unknown_operation;

    // An address that failed to authenticate too often is refused before its signature costs anything.
    if (auto wait = auth_cooldown(ctx))
        co_return make_error(errc::rate_limited,
                             "Too many failed authentications from your address; retry in " +
                                 std::to_string(wait->count()) + " s.");
    // Authenticate before anything else, including before the body is read.
    // POST Object carries its credentials in the form, not in a header: its fields up to the file are read
    // first (at most S3's 20 KB of them), the file stays unread until authorization is done.
    // (Two statements, not a conditional expression: GCC 12 destroys a co_await's result in one twice.)
    result<std::optional<auth::parsed_auth>> authed = std::optional<auth::parsed_auth>{};
    if (r && r->fn.is(s3op::post_object))
        authed = co_await s3op::authenticate_post_object(ctx);
    else
        authed = co_await authenticate(ctx);
    if (!authed)
        co_return std::move(authed).error();
    const bool anonymous = !*authed;
    if (anonymous && r && r->fn.implemented() && anonymous_may_try(ctx, where, r->permission.value)) {
        // Anonymous, for a read ACL grants can allow (AllUsers): the operation runs as a caller without a
        // user, whom auth::authorize grants nothing but public reads; rate-limited by address.
        if (!ctx.svc->limiter.admit("anonymous@" + ctx.remote))
            co_return make_error(errc::rate_limited, "Please reduce your request rate.");
        ctx.principal = auth::principal{};
    } else if (anonymous) {
        // Anonymous: nothing is granted to anonymous callers, so S3's answer is 403 AccessDenied, except for
        // a bucket that does not exist, which S3 answers with 404 NoSuchBucket (bucket names are global and
        // public there; here any key holder learns the same). Whether a key exists is never told (403 either
        // way, as S3 answers callers that may not list the bucket); CreateBucket is refused as on S3.
        if (r && where != scope::service && !r->fn.is(s3op::create_bucket) && !s3op::is_model_view(ctx)) {
            auto b = co_await ctx.svc->buckets.get(ctx.bucket);
            if (!b && b.error().code == errc::no_such_bucket)
                co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        }
        co_return make_error(errc::access_denied, "Access Denied");
    } else {
        if (!ctx.svc->limiter.admit(ctx.who.access_key_id))
            co_return make_error(errc::rate_limited, "Please reduce your request rate.");
        set_principal(ctx);
    }

    if (!r) {
        if (!unimplemented.empty())
            co_return make_error(
                errc::not_implemented,
                "A header or query you provided implies functionality that is not implemented");
        co_return make_error(errc::method_not_allowed,
                             "The specified method is not allowed against this resource.");
    }
    if (!r->fn.implemented())
        co_return make_error(errc::not_implemented, std::string(r->name) + " is not implemented yet");
    ctx.audit = audit_context_of(ctx);
    ctx.permission = r->permission.value;
    ctx.s3_action = action_of(r->name, ctx.has_param("versionId"));
    auto proof = co_await authorization_step::s3(ctx, ctx.permission, r->resource.value, r->name);
    if (!proof)
        co_return std::move(proof).error();
    // A header asking for a feature Depot lacks is refused, never ignored (s3/request_headers.hpp).
    for (const auto& f : *ctx.header)
        if (auto supported = s3::check_request_header(f.name_string(), f.value()); !supported)
            co_return std::move(supported).error();
    if (auto owner = co_await s3op::check_expected_bucket_owner(ctx); !owner)
        co_return std::move(owner).error();
    // A write's ACL headers are checked before its body is read (the operations storing them check more).
    if (!auth::is_read(ctx.permission))
        if (auto acl = s3op::check_acl_headers(ctx, r->name); !acl)
            co_return std::move(acl).error();
    co_return co_await run_handler(*r, *proof, ctx);
}

} // namespace

std::vector<route_permission_entry> s3_route_permissions()
{
    std::vector<route_permission_entry> out;
    for (const auto& r : routes)
        out.push_back({.route = std::string(http::to_string(r.method)) + " " + std::string(r.name),
                       .read_method = r.method == http::verb::get || r.method == http::verb::head ||
                                      r.method == http::verb::options,
                       .permission = r.permission.value,
                       .action = std::string(action_of(r.name, false))});
    return out;
}

asio::awaitable<response> dispatch(request_context& ctx)
{
    auto target = ctx.header->target();
    std::string_view raw(target.data(), target.size());
    std::string_view resource = raw.substr(0, raw.find('?'));
    std::size_t operation = unknown_operation;

    // Operational endpoints, unauthenticated except /metrics with --metrics-token-file (a bearer token). A
    // signed request for these paths is S3 (a bucket named "metrics"), and so is anything with a query
    // string.
    // A virtual-hosted request is S3's (keys named metrics, healthz, ui/...), as pipeline.hpp's
    // choose_surface says. The console's listener serves no S3: its Host names no bucket.
    const bool virtual_hosted =
        ctx.listener != listener_kind::console && !virtual_host_bucket_of(ctx).empty();
    const auto operational_auth = ctx.get("authorization");
    const bool bearer = operational_auth && operational_auth->size() >= 7 &&
                        iequals_ascii(operational_auth->substr(0, 7), "Bearer ");
    if (!virtual_hosted &&
        (ctx.header->method() == http::verb::get || ctx.header->method() == http::verb::head) &&
        raw.starts_with('/') && is_operational_endpoint(raw.substr(1)) &&
        (!operational_auth || (bearer && raw == "/metrics" && !ctx.svc->metrics_token.empty()))) {
        response res;
        // A wrong token counts as a failed authentication of the address, as on every other surface, and an
        // address cooling down is refused before its token is compared.
        const auto cooling = raw == "/metrics" && operational_auth ? auth_cooldown(ctx) : std::nullopt;
        if (cooling) {
            res.status = http::status::too_many_requests;
            res.headers.set(http::field::retry_after, std::to_string(cooling->count()));
            res.headers.set(http::field::content_type, "text/plain");
            res.body = "Too many failed authentications from this address; retry later\n";
        } else if (raw == "/metrics" && !metrics_authorized(ctx.svc->metrics_token, operational_auth)) {
            if (operational_auth)
                record_auth_failure(ctx);
            res.status = http::status::unauthorized;
            res.headers.set(http::field::www_authenticate, "Bearer realm=\"depot metrics\"");
            res.headers.set(http::field::content_type, "text/plain");
            res.body = "/metrics needs Authorization: Bearer <the token of --metrics-token-file>\n";
        } else if (raw == "/metrics") {
            (void)s3_request_metrics(); // every S3 series exists from the first scrape on, at zero
            res = co_await metrics_response(*ctx.svc);
        } else if (raw == "/readyz") {
            res = co_await readiness_response(*ctx.svc);
        } else {
            res.headers.set(http::field::content_type, "text/plain");
            res.body = "ok\n";
        }
        res.head_only = ctx.header->method() == http::verb::head;
        co_return res;
    }

    // Counts the request in flight now; writes the access log once the response has been sent.
    auto record = std::make_shared<request_record>(s3_request_metrics(), ctx);

    // The web console's static files: public, like the page a sign-in form is on (console.hpp); logged and
    // counted as operation "Console".
    if (!virtual_hosted && is_console_request(ctx)) {
        auto console_res = console_response(ctx);
        request_record::attach(std::move(record), ctx, console_operation,
                               operation_names()[console_operation], "", console_res);
        co_return console_res;
    }

    // Which surface serves the request: decided by its credentials and host first, then by its path's
    // shape (server/pipeline.hpp), so that no valid S3 request is answered by another protocol.
    const auto authorization = ctx.get("authorization");
    const auto qmark = raw.find('?');
    const request_shape shape{
        .method = std::string_view(ctx.header->method_string().data(), ctx.header->method_string().size()),
        .path = resource,
        .credentials =
            credential_of(authorization.has_value(), authorization.value_or(""),
                          qmark == std::string_view::npos ? std::string_view() : raw.substr(qmark + 1)),
        .virtual_hosted = virtual_hosted};
    auto chosen = choose_surface(shape);
    if (chosen == surface::hub_unless_bucket) {
        // No credentials: an S3 read only if public grants can answer it, i.e. public access is allowed and
        // the first segment names a bucket (the cached lookup anonymous S3 requests make anyway).
        chosen = surface::hub;
        if (ctx.svc->opts.allow_public_access) {
            const auto first = resource.substr(1, resource.find('/', 1) == std::string_view::npos
                                                      ? std::string_view::npos
                                                      : resource.find('/', 1) - 1);
            // A team of that name keeps its Hub paths: a bucket named like it (bucket and team names are
            // separate namespaces) must not answer a Hub client's anonymous download with its own objects.
            if (auto name = uri_decode(first); name && s3::is_storable_text(*name) && !name->empty())
                if (auto b = co_await ctx.svc->buckets.get(*name); b) {
                    auto team = co_await ctx.svc->models.get_team(*name);
                    if (!team)
                        chosen = surface::s3;
                }
        }
    }

    if (chosen == surface::hub) {
        std::optional<std::size_t> route;
        bool denied = false;
        auto hf_res = co_await hf::dispatch(ctx, route, denied);
        const std::size_t index =
            route ? first_rest_route + api::operation_ids().size() + *route : unknown_operation;
        request_record::attach(std::move(record), ctx, index, operation_names()[index],
                               denied ? to_string(errc::access_denied) : std::string_view(), hf_res);
        co_return hf_res;
    }

    if (chosen == surface::rest) {
        std::optional<std::size_t> route;
        bool denied = false;
        auto api_res = co_await api::dispatch(ctx, route, denied);
        const std::size_t index = route ? first_rest_route + *route : rest_api_operation;
        request_record::attach(std::move(record), ctx, index, operation_names()[index],
                               denied ? to_string(errc::access_denied) : std::string_view(), api_res);
        co_return api_res;
    }

    std::optional<error> failure;
    std::optional<response> res;
    (void)take_refusal(ctx); // nothing recorded before this request started counts
    try {
        auto r = co_await run_s3(ctx, operation);
        if (r)
            res = std::move(*r);
        else
            failure = std::move(r).error();
    } catch (const std::exception& e) {
        failure = error_from_exception(e, ctx.request_id);
    }
    // Denials of authenticated callers get audit rows of their own (GetObject writes its download row): a
    // 403, and a refusal answered as a missing bucket or key (take_refusal: a team's model in the models
    // view, a bucket the caller may not learn exists), with the team and bucket it was aimed at, so that
    // the team's admins read it.
    bool audited_denial = false;
    if (operation < routes.size()) {
        refused_request addressed;
        addressed.action = "s3." + std::string(routes[operation].name);
        addressed.resource = ctx.key.empty() ? ctx.bucket : ctx.bucket + "/" + ctx.key;
        // The bucket it was aimed at, in the row's details; for a key, the row is the team's whose model
        // holds the key (audit_denial looks it up), as the models view's rows are.
        // A listing's is its prefix's: the team whose model the prefix is inside.
        if (!s3op::is_model_view(ctx)) {
            addressed.bucket = ctx.bucket;
            addressed.key =
                registry::live_key_of(ctx.key.empty() ? ctx.param("prefix").value_or("") : ctx.key);
        }
        if (failure && failure->code == errc::access_denied && !ctx.who.user_id.empty() &&
            s3op::is_model_view(ctx)) {
            // A 403 in the models view (a scope that does not reach the model, a write to the read-only
            // view) is aimed at the team its key names, when there is one: its admins read the row.
            const std::string_view first = std::string_view(ctx.key).substr(0, ctx.key.find('/'));
            if (!first.empty())
                if (auto t = co_await ctx.svc->models.get_team(first); t)
                    addressed.team = t->name;
        }
        audited_denial = co_await audit_refusal(ctx, failure, std::move(addressed));
    } else {
        (void)take_refusal(ctx);
    }
    if (failure && failure->code == errc::unavailable)
        log::warn("backend unavailable; answering 503 SlowDown", {{"request_id", ctx.request_id},
                                                                  {"operation", operation_names()[operation]},
                                                                  {"error", failure->message}});
    if (failure)
        res = s3_error_response(*failure, resource, ctx.request_id, ctx.header->method() == http::verb::head,
                                ctx.bucket, ctx.key);
    // A browser reads a response (an error too) only with the CORS headers the bucket grants its origin.
    if (ctx.header->method() != http::verb::options)
        co_await s3op::add_cors_headers(ctx, *res);

    // A refusal answered as a missing key is logged as what it is, like the REST and Hub APIs' 404s.
    const std::string_view error_code = audited_denial ? to_string(errc::access_denied)
                                        : failure      ? to_string(failure->code)
                                                       : std::string_view();
    request_record::attach(std::move(record), ctx, operation, operation_names()[operation], error_code, *res);
    co_return std::move(*res);
}

} // namespace depot::server
