#include "registry/service/credentials.hpp"

#include "auth/scope_alias.hpp"
#include "common/json.hpp"
#include "registry/repo/credential_scope.hpp"
#include "registry/repo/identity_repository.hpp"
#include "registry/repo/session_repository.hpp"
#include "registry/repo/token_repository.hpp"

namespace depot::registry {

credential_service::credential_service(pg::pool& pool, std::string server_key, lookup_cache* cache)
    : pool_(pool), identities_(std::make_unique<identity_repository>(pool, std::move(server_key), cache)),
      tokens_(std::make_unique<token_repository>(pool)), sessions_(std::make_unique<session_repository>(pool))
{}

credential_service::~credential_service() = default;

asio::awaitable<result<user>> credential_service::create_user(const audit_context& who, user u)
{
    if (u.id.starts_with(event_link_user_prefix))
        co_return make_error(errc::invalid_argument, "user ids starting with '" +
                                                         std::string(event_link_user_prefix) +
                                                         "' are depotd's own (the signers of event links)");
    co_return co_await identities_->create_user(who, std::move(u));
}

asio::awaitable<result<user>> credential_service::create_event_link_user(std::string_view team)
{
    user u;
    u.id = std::string(event_link_user_prefix) + std::string(team);
    u.display_name = "Presigned links of team " + std::string(team) + "'s events";
    co_return co_await identities_->create_user(system_audit_context(), std::move(u));
}

asio::awaitable<result<user>> credential_service::get_user(std::string_view id)
{
    return identities_->get_user(id);
}

asio::awaitable<result<std::string>> credential_service::user_with_email(std::string_view email)
{
    auto ids = co_await identities_->users_with_email(email, 2);
    if (ids.empty())
        co_return make_error(errc::unresolvable_grant,
                             "The email address you provided does not match any account on record.");
    if (ids.size() > 1)
        co_return make_error(errc::ambiguous_grant,
                             "The email address you provided is associated with more than one account.");
    co_return std::move(ids.front());
}

asio::awaitable<std::vector<user>> credential_service::list_users()
{
    return identities_->list_users();
}

asio::awaitable<result<access_key>>
credential_service::create_key(const audit_context& who, std::string_view user_id, std::string access_key_id,
                               std::string secret, std::string scope, std::optional<time_point> expires_at)
{
    auto bound = co_await bind_scope(std::move(scope));
    if (!bound)
        co_return std::move(bound).error();
    co_return co_await identities_->create_key(who, user_id, std::move(access_key_id), std::move(secret),
                                               std::move(*bound), expires_at);
}

asio::awaitable<result<access_key>> credential_service::get_key(std::string_view access_key_id)
{
    return identities_->get_key(access_key_id);
}

asio::awaitable<result<access_key>> credential_service::find_active_key(std::string_view access_key_id)
{
    return identities_->find_active_key(access_key_id);
}

asio::awaitable<std::vector<access_key>> credential_service::list_keys(std::string_view user_id)
{
    return identities_->list_keys(user_id);
}

asio::awaitable<result<void>> credential_service::revoke_key(const audit_context& who,
                                                             std::string_view access_key_id)
{
    return identities_->revoke_key(who, access_key_id);
}

asio::awaitable<result<api_token>>
credential_service::create_token(const audit_context& who, std::string_view user_id, std::string name,
                                 std::optional<time_point> expires_at, std::string scope)
{
    auto bound = co_await bind_scope(std::move(scope));
    if (!bound)
        co_return std::move(bound).error();
    co_return co_await tokens_->create(who, user_id, std::move(name), expires_at, std::move(*bound));
}

asio::awaitable<result<api_token>> credential_service::get_token(std::string_view id)
{
    return tokens_->get(id);
}

asio::awaitable<result<api_token>> credential_service::authenticate_token(std::string_view token)
{
    return tokens_->authenticate(token);
}

asio::awaitable<std::vector<api_token>> credential_service::list_tokens(std::string_view user_id)
{
    return tokens_->list(user_id);
}

asio::awaitable<result<void>> credential_service::revoke_token(const audit_context& who, std::string_view id)
{
    return tokens_->revoke(who, id);
}

asio::awaitable<result<console_session>> credential_service::open_session(const audit_context& who,
                                                                          std::string_view user_id,
                                                                          std::string_view access_key_id,
                                                                          std::string_view token_id,
                                                                          time_point expires_at)
{
    return sessions_->create(who, user_id, access_key_id, token_id, expires_at);
}

asio::awaitable<result<console_session>> credential_service::authenticate_session(std::string_view cookie)
{
    return sessions_->authenticate(cookie);
}

asio::awaitable<result<void>> credential_service::end_session(const audit_context& who, std::string_view id)
{
    return sessions_->revoke(who, id);
}

asio::awaitable<std::int64_t> credential_service::purge_ended_sessions(time_point before)
{
    return sessions_->purge_ended(before);
}

asio::awaitable<std::optional<model_location>> credential_service::locate_model(std::string_view team,
                                                                                std::string_view model)
{
    return registry::locate_model(pool_, team, model);
}

asio::awaitable<bool> credential_service::alias_has_file(std::int64_t model_id, std::int64_t alias_id,
                                                         std::string_view path)
{
    return registry::alias_has_file(pool_, model_id, alias_id, path);
}

asio::awaitable<result<std::string>> credential_service::bind_scope(std::string scope)
{
    if (scope.empty())
        co_return scope;
    auto parsed = parse_scope(scope);
    if (!parsed)
        co_return std::move(parsed).error();
    if (parsed->alias.empty())
        co_return scope;
    const auto id = co_await registry::alias_id_of(pool_, parsed->team, parsed->model, parsed->alias);
    if (!id)
        co_return make_error(errc::invalid_argument,
                             "scope.alias: the model " + parsed->team + "/" + parsed->model +
                                 " has no alias '" + parsed->alias + "'",
                             "scope");
    if (const auto asked = auth::scope_alias_id(scope); asked != 0 && asked != *id)
        co_return make_error(errc::invalid_argument,
                             "scope.alias_id names another alias than today's '" + parsed->alias +
                                 "' (that one was deleted)",
                             "scope");
    // The canonical members in name order, with the alias's identity after its name.
    auto canonical = json_parse(scope_json(*parsed));
    boost::json::object out;
    for (const auto& member : canonical->get_object()) {
        out[member.key()] = member.value();
        if (member.key() == "alias")
            out["alias_id"] = *id;
    }
    co_return boost::json::serialize(out);
}

} // namespace depot::registry
