#include "registry/repo/token_repository.hpp"

#include "common/hash.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
namespace {

constexpr std::string_view token_prefix = "dpt_";
constexpr std::string_view hf_prefix = "hf_";
constexpr std::size_t token_id_length = 12;
constexpr std::size_t token_secret_length = 32;

constexpr const char* token_columns =
    "t.id, t.user_id, u.display_name, t.name, " DEPOT_MS("t.created_at") ", " DEPOT_MS(
        "t.expires_at") ", " DEPOT_MS("t.revoked_at") ", coalesce(t.scope::text, ''), u.is_admin";

api_token token_from(const pg::row& r)
{
    return api_token{.id = r.str(0),
                     .user_id = r.str(1),
                     .user_display_name = r.str(2),
                     .name = r.str(3),
                     .created_at = from_millis(r.i64(4)),
                     .expires_at = opt_time(r, 5),
                     .revoked_at = opt_time(r, 6),
                     .scope = r.str(7),
                     .user_is_admin = r.boolean(8)};
}

bool token_is_alnum(std::string_view s)
{
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return false;
    return true;
}

} // namespace

asio::awaitable<result<api_token>> token_repository::create(const audit_context& who,
                                                            std::string_view user_id, std::string name,
                                                            std::optional<time_point> expires_at,
                                                            std::string scope)
{
    const auto id = random_text("abcdefghijklmnopqrstuvwxyz0123456789", token_id_length);
    const auto secret =
        random_text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", token_secret_length);
    const pg::bytes hash(sha256(secret));
    std::optional<std::int64_t> expires_ms;
    if (expires_at)
        expires_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(expires_at->time_since_epoch()).count();
    std::optional<std::string> scope_param;
    if (!scope.empty())
        scope_param = scope;
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<api_token>> {
        auto known = co_await sql(c, "SELECT 1 FROM users WHERE id = $1", user_id);
        if (known.empty())
            co_return make_error(errc::not_found, "No such user");
        auto rs =
            co_await sql(c,
                         std::string("WITH t AS (INSERT INTO api_tokens (id, user_id, name, secret_hash, "
                                     "expires_at, scope) VALUES ($1, $2, $3, $4, to_timestamp($5::double "
                                     "precision / 1000), $6::jsonb) RETURNING *) SELECT ") +
                             token_columns + " FROM t JOIN users u ON u.id = t.user_id",
                         id, user_id, name, hash, expires_ms, scope_param);
        const std::string scope_text = scope.empty() ? std::string("null") : scope;
        const std::string details = "{\"user\":" + audit_quote(user_id) + ",\"name\":" + audit_quote(name) +
                                    ",\"scope\":" + scope_text + "}";
        co_await append_audit(c, who, "token.create", "token:" + id, "", details);
        auto token = token_from(rs[0]);
        token.token = std::string(token_prefix) + id + "_" + secret;
        co_return token;
    });
}

asio::awaitable<result<api_token>> token_repository::authenticate(std::string_view token)
{
    auto unknown = [] { return make_error(errc::not_found, "The API token is unknown, revoked or expired"); };
    // Hugging Face Hub clients refuse tokens that do not start with "hf_" (HF_TOKEN): the same token written
    // "hf_dpt_..." is accepted wherever the token is.
    if (token.starts_with(hf_prefix) && token.substr(hf_prefix.size()).starts_with(token_prefix))
        token.remove_prefix(hf_prefix.size());
    if (!token.starts_with(token_prefix) ||
        token.size() != token_prefix.size() + token_id_length + 1 + token_secret_length ||
        token[token_prefix.size() + token_id_length] != '_')
        co_return unknown();
    const auto id = token.substr(token_prefix.size(), token_id_length);
    const auto secret = token.substr(token_prefix.size() + token_id_length + 1);
    if (!token_is_alnum(id) || !token_is_alnum(secret))
        co_return unknown();
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string("SELECT ") + token_columns +
                               ", t.secret_hash FROM api_tokens t JOIN users u ON u.id = t.user_id "
                               "WHERE t.id = $1 AND t.revoked_at IS NULL "
                               "AND (t.expires_at IS NULL OR t.expires_at > now())",
                           id);
    if (rs.empty() || !constant_time_equal(rs[0].bytea(9), sha256(secret)))
        co_return unknown();
    co_return token_from(rs[0]);
}

asio::awaitable<std::vector<api_token>> token_repository::list(std::string_view user_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string("SELECT ") + token_columns +
                               " FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.user_id = $1 "
                               "ORDER BY t.created_at, t.id",
                           user_id);
    std::vector<api_token> out;
    for (auto r : rs)
        out.push_back(token_from(r));
    co_return out;
}

asio::awaitable<result<void>> token_repository::revoke(const audit_context& who, std::string_view id)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs =
            co_await sql(c,
                         "UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL "
                         "RETURNING user_id",
                         id);
        if (rs.empty())
            co_return make_error(errc::not_found, "No such active token");
        co_await append_audit(c, who, "token.revoke", "token:" + std::string(id), "",
                              "{\"user\":" + audit_quote(rs[0].text(0)) + "}");
        co_return ok();
    });
}

asio::awaitable<result<api_token>> token_repository::get(std::string_view id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string("SELECT ") + token_columns +
                               " FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = $1",
                           id);
    if (rs.empty())
        co_return make_error(errc::not_found, "No such token");
    co_return token_from(rs[0]);
}

} // namespace depot::registry
