// Object tagging: a version's tag set is a column of its row (schema/0020_tagging.sql). Changing it touches
// nothing else: no new version, no commit sequence number, no content.
#include "registry/repo/object_tags.hpp"

#include "registry/repo/audit.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/object_service.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {

asio::awaitable<result<void>>
object_service::set_tags(const audit_context& who, const object_version& version, std::vector<s3::tag> tags)
{
    const std::string stored = tags_json(tags);
    const std::string details = "{\"version_id\":" + audit_quote(version.version_id) +
                                ",\"tags\":" + std::to_string(tags.size()) + "}";
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        if (!co_await set_version_tags(c, version.row_id, stored))
            co_return make_error(errc::no_such_version, "The specified version does not exist.");
        co_await append_object_audit(c, who, "object.tagging", version.bucket_id, version.key, details);
        co_return ok();
    });
}

} // namespace depot::registry
