#include "registry/service/audit.hpp"

#include "registry/repo/audit.hpp"
#include "registry/repo/request_audit.hpp"

namespace depot::registry::audit_log {

asio::awaitable<result<std::vector<std::string>>> list(pg::pool& pool, const audit_query& q)
{
    return list_audit(pool, q);
}

asio::awaitable<audit_verification> verify(pg::pool& pool)
{
    return verify_audit(pool);
}

asio::awaitable<std::int64_t> seal(pg::pool& pool)
{
    return seal_audit(pool);
}

bool take_appended() noexcept
{
    return take_audit_appended();
}

asio::awaitable<void> record_denial(pg::pool& pool, const audit_context& who, const denial& d)
{
    return audit_denial(pool, who, d);
}

asio::awaitable<void> record_model_download(pg::pool& pool, const audit_context& who,
                                            std::string_view resource, std::string_view team,
                                            std::string details_json)
{
    return audit_model_download(pool, who, resource, team, std::move(details_json));
}

asio::awaitable<void> record_bucket_download(pg::pool& pool, const audit_context& who,
                                             std::string_view resource, std::string_view bucket,
                                             std::string_view key)
{
    return audit_bucket_download(pool, who, resource, bucket, key);
}

asio::awaitable<void> record_download_link(pg::pool& pool, const audit_context& who, std::string resource,
                                           std::string team, std::string details_json)
{
    auto conn = co_await pool.acquire();
    co_await append_audit(*conn, who, "model.download_link", resource, team, std::move(details_json),
                          audit_allowed);
}

} // namespace depot::registry::audit_log
