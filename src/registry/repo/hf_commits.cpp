#include "registry/repo/hf_commits.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {
namespace {

/// Gives every version of the model without a commit id its id. The manifest text hashed is one line per
/// file in path order ("path TAB size TAB sha256-hex"), after a header naming the model and the number.
/// Concurrent callers may compute the same rows: the conflict clause keeps the first, which is identical.
constexpr std::string_view assign_missing =
    "INSERT INTO model_version_commits (version_id, model_id, commit_id) "
    "SELECT v.id, v.model_id, left(encode(sha256(convert_to('depot-model-version ' || v.model_id || ' ' || "
    "v.number || E'\\n' || coalesce((SELECT string_agg(f.path || E'\\t' || f.size || E'\\t' || "
    "coalesce(encode(f.sha256, 'hex'), f.etag), E'\\n' ORDER BY f.path) FROM model_files f "
    "WHERE f.version_id = v.id), ''), 'UTF8')), 'hex'), 40) "
    "FROM model_versions v WHERE v.model_id = $1 AND NOT EXISTS "
    "(SELECT 1 FROM model_version_commits c WHERE c.version_id = v.id) "
    "ON CONFLICT DO NOTHING";

} // namespace

asio::awaitable<std::string> version_commit(pg::pool& pool, std::int64_t model_id, std::int64_t version_id)
{
    auto conn = co_await pool.acquire();
    auto rs =
        co_await sql(*conn, "SELECT commit_id FROM model_version_commits WHERE version_id = $1", version_id);
    if (rs.empty()) {
        co_await sql(*conn, assign_missing, model_id);
        rs = co_await sql(*conn, "SELECT commit_id FROM model_version_commits WHERE version_id = $1",
                          version_id);
    }
    co_return rs.empty() ? std::string() : rs[0].str(0);
}

asio::awaitable<std::optional<int>> version_of_commit(pg::pool& pool, std::int64_t model_id,
                                                      std::string_view commit)
{
    auto conn = co_await pool.acquire();
    co_await sql(*conn, assign_missing, model_id);
    auto rs = co_await sql(*conn,
                           "SELECT v.number FROM model_version_commits c JOIN model_versions v ON v.id = "
                           "c.version_id WHERE c.model_id = $1 AND c.commit_id = $2",
                           model_id, commit);
    if (rs.empty())
        co_return std::nullopt;
    co_return static_cast<int>(rs[0].i64(0));
}

} // namespace depot::registry
