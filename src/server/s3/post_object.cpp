// POST Object — https://docs.aws.amazon.com/AmazonS3/latest/API/RESTObjectPOST.html (browser form uploads,
// policies signed with SigV4 or SigV2).
#include "server/s3/post_object.hpp"

#include "auth/post_signature.hpp"
#include "common/hash.hpp"
#include "common/uri.hpp"
#include "s3/etag.hpp"
#include "s3/header_values.hpp"
#include "s3/names.hpp"
#include "s3/post_form.hpp"
#include "s3/post_policy.hpp"
#include "s3/request_headers.hpp"
#include "s3/responses.hpp"
#include "s3/utf8.hpp"
#include "s3/xml.hpp"
#include "server/authenticate.hpp"
#include "server/s3/access.hpp"
#include "server/s3/common.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/sse.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstring>

namespace depot::server::s3op {

/// The form as read while authenticating: its fields before the file part, and the parser positioned at
/// the file part's first byte.
struct post_form
{
    explicit post_form(std::string_view boundary) : parser(boundary) {}

    s3::form_parser parser;
    std::vector<s3::form_field> fields; ///< lower-case names, in form order
    std::string filename;               ///< of the file part, without its directories
    std::optional<auth::post_credentials> credentials;
    std::array<std::byte, 64 * 1024> chunk{};
    std::uint64_t read = 0; ///< body bytes read so far

    const std::string* field(std::string_view name) const
    {
        for (const auto& [n, v] : fields)
            if (n == name)
                return &v;
        return nullptr;
    }
};

namespace {

/// S3's limit on what precedes the file (fields, their headers and boundaries): 20 KB.
constexpr std::size_t max_field_bytes = 20 * 1024;
/// Body bytes read before the file part starts, whatever they are (a long preamble, many empty parts).
constexpr std::uint64_t max_bytes_before_file = 256 * 1024;

error too_many_field_bytes()
{
    return make_error(errc::post_fields_too_large,
                      "Your POST request fields preceding the upload file were too large.");
}

/// The next parser event, reading the body as the parser needs it.
asio::awaitable<result<s3::form_parser::event>> next_event(post_form& form, depot::byte_source& body)
{
    for (;;) {
        auto ev = form.parser.next();
        if (!ev || *ev != s3::form_parser::event::need_more)
            co_return ev;
        auto n = co_await body.read_some(form.chunk);
        if (!n)
            co_return std::move(n).error();
        if (*n == 0) {
            form.parser.finish();
            continue;
        }
        form.read += *n;
        form.parser.feed(std::string_view(reinterpret_cast<const char*>(form.chunk.data()), *n));
    }
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

/// What follows the last '/' or '\' of a browser's file name (S3's ${filename}).
std::string base_name(std::string_view name)
{
    auto cut = name.find_last_of("/\\");
    return std::string(cut == std::string_view::npos ? name : name.substr(cut + 1));
}

/// Reads fields until the part named "file" begins.
asio::awaitable<result<void>> read_fields(post_form& form, depot::byte_source& body)
{
    std::size_t field_bytes = 0;
    std::optional<s3::form_field> current;
    for (;;) {
        auto ev = co_await next_event(form, body);
        if (!ev)
            co_return std::move(ev).error();
        if (form.read > max_bytes_before_file)
            co_return too_many_field_bytes();
        using event = s3::form_parser::event;
        switch (*ev) {
        case event::need_more:
            break;
        case event::part_begin: {
            const auto& part = form.parser.part();
            auto name = lower(part.name);
            field_bytes += name.size();
            if (field_bytes > max_field_bytes)
                co_return too_many_field_bytes();
            if (name == "file") {
                form.filename = base_name(part.filename.value_or(""));
                co_return ok();
            }
            current = s3::form_field{std::move(name), std::string()};
            break;
        }
        case event::data:
            field_bytes += form.parser.data().size();
            if (field_bytes > max_field_bytes)
                co_return too_many_field_bytes();
            current->second.append(form.parser.data());
            break;
        case event::part_end:
            if (!s3::is_storable_text(current->first) || !s3::is_storable_text(current->second))
                co_return make_error(errc::invalid_argument, "Form fields must be valid UTF-8 without NUL",
                                     s3::is_storable_text(current->first) ? current->first : std::string());
            if (form.field(current->first))
                co_return make_error(errc::invalid_argument,
                                     "Bucket POST must contain the field '" + current->first + "' only once",
                                     current->first);
            form.fields.push_back(std::move(*current));
            current.reset();
            break;
        case event::end:
            co_return make_error(errc::invalid_argument, "POST requires exactly one file upload per request.",
                                 "file");
        }
    }
}

/// The file part as a byte source: ends with the part, refuses sizes outside the policy's range.
class file_source final : public depot::byte_source
{
public:
    file_source(post_form& form, depot::byte_source& body, s3::size_range range)
        : form_(form), body_(body), range_(range)
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        while (pending_.empty()) {
            if (ended_)
                co_return 0;
            auto ev = co_await next_event(form_, body_);
            if (!ev)
                co_return std::move(ev).error();
            if (*ev == s3::form_parser::event::data) {
                pending_ = form_.parser.data();
            } else if (*ev == s3::form_parser::event::part_end) {
                ended_ = true;
                if (total_ < range_.min)
                    co_return make_error(errc::entity_too_small,
                                         "Your proposed upload is smaller than the minimum allowed size");
                co_return 0;
            } else {
                co_return make_error(errc::malformed_post_request,
                                     "The body of your POST request is not well-formed multipart/form-data.");
            }
        }
        const std::size_t n = std::min(buf.size(), pending_.size());
        std::memcpy(buf.data(), pending_.data(), n);
        pending_.remove_prefix(n);
        total_ += n;
        if (range_.max && total_ > *range_.max)
            co_return make_error(errc::entity_too_large,
                                 "Your proposed upload exceeds the maximum allowed size");
        co_return n;
    }

private:
    post_form& form_;
    depot::byte_source& body_;
    s3::size_range range_;
    std::string_view pending_;
    std::uint64_t total_ = 0;
    bool ended_ = false;
};

/// The one call into the object service, done by the form's signer.
asio::awaitable<result<registry::object_version>>
store_posted_object(request_context& ctx, registry::put_object_request request, services& svc)
{
    co_return co_await svc.objects.put_object(ctx.audit, std::move(request));
}

/// Form fields that become the object's headers, as PutObject's request headers do.
constexpr std::array<std::string_view, 6> header_fields = {"content-type",     "content-disposition",
                                                           "content-language", "cache-control",
                                                           "expires",          "content-encoding"};

/// Fields POST Object knows besides the headers, x-amz-meta-* and x-amz-checksum-*.
constexpr std::array<std::string_view, 23> known_fields = {
    "key", "acl", "policy", "file", "success_action_status", "tagging", "redirect", "x-amz-algorithm",
    "x-amz-credential", "success_action_redirect", "content-md5", "signature", "x-amz-date",
    "x-amz-signature", "x-amz-storage-class", "awsaccesskeyid",
    // SSE-S3 and SSE-C
    "x-amz-server-side-encryption", "x-amz-server-side-encryption-customer-algorithm",
    "x-amz-server-side-encryption-customer-key", "x-amz-server-side-encryption-customer-key-md5",
    // Object Lock
    "x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date", "x-amz-object-lock-legal-hold"};

result<registry::object_headers> headers_of(const post_form& form)
{
    registry::object_headers h;
    for (auto name : header_fields) {
        const auto* v = form.field(name);
        if (!v)
            continue;
        if (auto valid = s3::validate_field_value(name, *v); !valid)
            return std::move(valid).error();
        if (name == "content-type")
            h.content_type = *v;
        else if (name == "content-disposition")
            h.content_disposition = *v;
        else if (name == "content-language")
            h.content_language = *v;
        else if (name == "cache-control")
            h.cache_control = *v;
        else if (name == "expires")
            h.expires = *v;
        else
            h.content_encoding = *v;
    }
    constexpr std::string_view meta = "x-amz-meta-";
    for (const auto& [name, value] : form.fields)
        if (name.size() > meta.size() && name.starts_with(meta))
            h.user_metadata.emplace_back(name.substr(meta.size()), value);
    if (auto valid = s3::validate_user_metadata(h.user_metadata); !valid)
        return std::move(valid).error();
    return h;
}

/// Fields asking for what Depot does not do are refused, never ignored (as PutObject's headers are).
result<void> check_supported(const post_form& form)
{
    for (const auto& [name, value] : form.fields) {
        if (auto supported = s3::check_request_header(name, value); !supported)
            return std::move(supported).error();
        if (!name.starts_with("x-amz-") || name.starts_with("x-amz-meta-") ||
            name.starts_with("x-amz-checksum-"))
            continue;
        if (std::find(known_fields.begin(), known_fields.end(), name) == known_fields.end())
            return make_error(errc::not_implemented,
                              "The form field " + name + " implies functionality that is not implemented",
                              name);
    }
    return ok();
}

/// The form's fields as a lookup by (lower-case) name, for the steps shared with PutObject's headers.
s3::header_lookup field_lookup(const post_form& form)
{
    return [&form](std::string_view name) -> std::optional<std::string_view> {
        const auto wanted = lower(name);
        if (const auto* v = form.field(wanted))
            return std::string_view(*v);
        return std::nullopt;
    };
}

/// The ACL of the `acl` field (a canned ACL, as x-amz-acl on PutObject), checked as PutObject checks its
/// ACL headers; nullopt without the field.
asio::awaitable<result<std::optional<s3::access_control_list>>>
acl_of(request_context& ctx, const post_form& form, const registry::bucket& b)
{
    // A named value returned, not a temporary (GCC 12 warns of its vector as maybe-uninitialized).
    std::optional<s3::access_control_list> out;
    const auto* field = form.field("acl");
    if (!field)
        co_return out;
    auto canned = s3::canned_acl_of(*field, "acl");
    if (!canned)
        co_return std::move(canned).error();
    out = s3::canned_grants(*canned, ctx.who.user_id, b.owner_id, true);
    if (auto allowed = co_await check_acl_change(ctx, b, *out, ctx.who.user_id); !allowed)
        co_return std::move(allowed).error();
    co_return out;
}

/// x-amz-checksum-<algorithm> (and x-amz-checksum-algorithm) fields.
result<checksum_request> checksum_of(const post_form& form)
{
    checksum_request out;
    for (const auto& [name, value] : form.fields) {
        auto algorithm = checksum_algorithm_from_header(name);
        if (!algorithm)
            continue;
        if (out.value)
            return make_error(errc::invalid_request, "Expecting a single x-amz-checksum- field");
        out.algorithm = algorithm;
        out.value = value;
    }
    if (const auto* declared = form.field("x-amz-checksum-algorithm")) {
        auto algorithm = parse_checksum_algorithm(*declared);
        if (!algorithm || (out.algorithm && *out.algorithm != *algorithm) || !out.value)
            return make_error(errc::invalid_request, "Value for x-amz-checksum-algorithm is invalid.");
    }
    return out;
}

std::string request_scheme(const request_context& ctx)
{
    return ctx.svc->opts.tls_cert_file.empty() ? "http" : "https";
}

/// The object's URL as the client addressed the bucket (path style or virtual-hosted style).
std::string object_location(const request_context& ctx)
{
    auto target = ctx.header->target();
    std::string_view path(target.data(), target.size());
    path = path.substr(0, path.find('?'));
    const bool virtual_host = path == "/" || path.empty();
    std::string url = request_scheme(ctx) + "://" + std::string(ctx.get("host").value_or("localhost")) + "/";
    if (!virtual_host)
        url += uri_encode(ctx.bucket) + "/";
    return url + uri_encode(ctx.key, true);
}

bool is_http_url(std::string_view url)
{
    auto l = lower(url.substr(0, 8));
    return (l.starts_with("http://") && url.size() > 7) || (l.starts_with("https://") && url.size() > 8);
}

} // namespace

std::optional<std::string_view> post_form_field(const post_form& form, std::string_view name)
{
    if (const auto* v = form.field(name))
        return std::string_view(*v);
    return std::nullopt;
}

asio::awaitable<result<std::optional<auth::parsed_auth>>> authenticate_post_object(request_context& ctx)
{
    auto content_type = ctx.get("content-type").value_or("");
    if (!s3::is_form_data(content_type))
        co_return make_error(errc::precondition_failed,
                             "Bucket POST must be of the enclosure-type multipart/form-data");
    auto boundary = s3::form_data_boundary(content_type);
    if (!boundary)
        co_return make_error(errc::malformed_post_request,
                             "The body of your POST request is not well-formed multipart/form-data.");
    auto form = std::make_shared<post_form>(*boundary);
    if (auto read = co_await read_fields(*form, *ctx.body); !read)
        co_return std::move(read).error();
    // ${filename} in the key is the browser's file name.
    for (auto& [name, value] : form->fields)
        if (name == "key")
            for (auto at = value.find("${filename}"); at != std::string::npos;
                 at = value.find("${filename}", at + form->filename.size()))
                value.replace(at, 11, form->filename);
    ctx.post_form = form;

    auto credentials = auth::parse_post_credentials(form->fields, ctx.svc->opts.region);
    if (!credentials)
        co_return std::move(credentials).error();
    const auto* key = form->field("key");
    if (!key)
        co_return make_error(
            errc::invalid_argument,
            "Bucket POST must contain a field named 'key'.  If it is specified, please check "
            "the order of the fields.",
            "key");
    // The form's key enters here, as a URL's key enters with its path: checked before anything (the key
    // look-up, the decision, the audit row of a refusal) reads it.
    if (auto valid = check_key(*key); !valid)
        co_return std::move(valid).error();
    if (!*credentials)
        co_return std::optional<auth::parsed_auth>{};

    auto found = co_await ctx.svc->credentials.find_active_key((*credentials)->access_key_id);
    if (!found) {
        record_auth_failure(ctx);
        co_return make_error(errc::invalid_access_key_id,
                             "The AWS Access Key Id you provided does not exist in our records.");
    }
    if (auto verified = auth::verify_post_signature(**credentials, found->secret); !verified) {
        record_auth_failure(ctx);
        co_return std::move(verified).error();
    }
    ctx.who = caller{.user_id = found->user_id,
                     .display_name = found->user_display_name,
                     .access_key_id = found->access_key_id,
                     .is_admin = found->user_is_admin,
                     .scope = found->scope};
    ctx.key = *key;
    form->credentials = std::move(**credentials);
    auth::parsed_auth out;
    out.access_key_id = form->credentials->access_key_id;
    out.payload_hash = "UNSIGNED-PAYLOAD";
    co_return std::optional<auth::parsed_auth>(std::move(out));
}

asio::awaitable<result<response>> post_object(request_context& ctx)
{
    auto& form = *ctx.post_form;
    const auto now = std::chrono::system_clock::now();

    // The policy: signed, so it decodes; then its lifetime and conditions.
    auto document = from_base64(form.credentials->policy);
    if (!document)
        co_return make_error(errc::invalid_argument, "Invalid Policy: Invalid 'Policy' encoding", "policy");
    auto policy = s3::parse_post_policy(*document);
    if (!policy)
        co_return std::move(policy).error();
    // A policy lives at most as long as a presigned URL may (seven days).
    const auto longest = auth::max_presigned_expiry + ctx.svc->opts.max_clock_skew;
    if (policy->expiration > now + longest ||
        (form.credentials->version == 4 && policy->expiration > form.credentials->date + longest))
        co_return make_error(errc::access_denied,
                             "Invalid according to Policy: Policy expiration must be at most 7 days after "
                             "the policy is signed.");
    auto range = s3::check_post_policy(*policy, form.fields, ctx.bucket, now);
    if (!range)
        co_return std::move(range).error();

    if (auto k = check_key(ctx.key); !k)
        co_return std::move(k).error();
    if (auto supported = check_supported(form); !supported)
        co_return std::move(supported).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto headers = headers_of(form);
    if (!headers)
        co_return std::move(headers).error();
    std::string md5;
    if (const auto* v = form.field("content-md5")) {
        auto raw = from_base64(*v);
        if (!raw || raw->size() != 16)
            co_return make_error(errc::invalid_digest, "The Content-MD5 you specified was invalid.");
        md5 = std::move(*raw);
    }
    auto checksum = checksum_of(form);
    if (!checksum)
        co_return std::move(checksum).error();
    std::vector<s3::tag> tags;
    if (const auto* v = form.field("tagging")) {
        auto parsed = s3::parse_tagging(*v);
        if (!parsed)
            co_return std::move(parsed).error();
        tags = std::move(*parsed);
    }

    const auto fields = field_lookup(form);
    auto lock = lock_request_of(fields, *bucket);
    if (!lock)
        co_return std::move(lock).error();
    if (auto may = co_await authorize_requested_lock(ctx, *bucket, ctx.key, *lock); !may)
        co_return std::move(may).error();
    // S3 wants an integrity check on every write that locks what it writes.
    if (lock->any() && md5.empty() && !checksum->algorithm)
        co_return make_error(errc::invalid_request,
                             "Content-MD5 OR x-amz-checksum- HTTP header is required for "
                             "Put Object requests with Object Lock parameters");
    auto acl = co_await acl_of(ctx, form, *bucket);
    if (!acl)
        co_return std::move(acl).error();
    if (auto may = authorize_write_attributes(ctx, *bucket, ctx.key, acl->has_value(), !tags.empty()); !may)
        co_return std::move(may).error();
    // SSE-C or SSE-S3 from the form's fields, else the bucket's default encryption.
    auto sse = write_encryption(ctx, *bucket, fields);
    if (!sse)
        co_return std::move(sse).error();

    file_source file(form, *ctx.body, *range);
    // A named request: GCC 12 destroys aggregate temporaries in a co_await operand twice.
    registry::put_object_request request{.target = &*bucket,
                                         .key = ctx.key,
                                         .owner_id = ctx.who.user_id,
                                         .headers = std::move(*headers),
                                         .content_length = std::nullopt,
                                         .expected_md5 = std::move(md5),
                                         .expected_sha256 = {},
                                         .checksum = checksum->algorithm,
                                         .checksum_value = std::move(checksum->value),
                                         .trailer_checksum = {},
                                         .body = &file,
                                         .tags = std::move(tags),
                                         .retention = lock->retention,
                                         .legal_hold = lock->legal_hold,
                                         .sse = *sse,
                                         .acl = stored_object_acl(*bucket, ctx.who.user_id, *acl)};
    // If-Match / If-None-Match: * hold as on PutObject (412, nothing stored), given as HTTP headers (outside
    // the form's signature, but one can only make the write fail, never widen it) or as form fields. A
    // condition is honoured or refused, never ignored; the two places may not disagree.
    auto conditions = write_conditions_of(ctx);
    for (auto [name, slot] : {std::pair{std::string_view("if-match"), &conditions.if_match},
                              std::pair{std::string_view("if-none-match"), &conditions.if_none_match}}) {
        const auto field = ctx.post_form ? post_form_field(*ctx.post_form, name) : std::nullopt;
        if (!field)
            continue;
        if (*slot && **slot != *field)
            co_return make_error(errc::invalid_argument,
                                 "The form field and the header " + std::string(name) + " disagree",
                                 std::string(name));
        *slot = std::string(*field);
    }
    request.if_match = std::move(conditions.if_match);
    request.if_none_match = std::move(conditions.if_none_match);
    auto stored = co_await store_posted_object(ctx, std::move(request), *ctx.svc);
    if (!stored)
        co_return std::move(stored).error();

    response res;
    const std::string etag = s3::quote_etag(stored->etag);
    res.headers.set(http::field::etag, etag);
    set_checksum_headers(res, stored->checksum_algorithm, stored->checksum_type, stored->checksum_value);
    set_sse_headers(res, *sse);
    if (stored->version_id != "null")
        res.headers.set("x-amz-version-id", stored->version_id);
    const std::string location = object_location(ctx);
    const auto* redirect = form.field("success_action_redirect");
    if (!redirect)
        redirect = form.field("redirect");
    if (redirect && is_http_url(*redirect)) {
        std::string url = *redirect;
        url += url.find('?') == std::string::npos ? "?" : "&";
        url +=
            "bucket=" + uri_encode(ctx.bucket) + "&key=" + uri_encode(ctx.key) + "&etag=" + uri_encode(etag);
        res.status = http::status::see_other;
        res.headers.set(http::field::location, url);
        co_return res;
    }
    res.headers.set(http::field::location, location);
    const auto* status = form.field("success_action_status");
    if (status && *status == "200") {
        res.status = http::status::ok;
    } else if (status && *status == "201") {
        res.status = http::status::created;
        res.headers.set(http::field::content_type, "application/xml");
        res.body = s3::post_response_xml(location, ctx.bucket, ctx.key, etag);
    } else {
        // S3's default, also for a value it does not know.
        res.status = http::status::no_content;
    }
    co_return res;
}

} // namespace depot::server::s3op
