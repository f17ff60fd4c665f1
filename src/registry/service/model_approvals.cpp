// model_registry: the approval workflow (approve, the other transitions) and a model's history.
#include "registry/repo/events.hpp"
#include "registry/repo/model_detail.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
using namespace model_detail;

asio::awaitable<result<model_version>> model_registry::approve(const model& m, const model_version& v,
                                                               const audit_context& who, std::string comment)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<void>> {
        co_await events::lock_model(c, m.id);
        auto state = co_await sql(c, "SELECT state FROM model_versions WHERE id = $1 FOR UPDATE", v.id);
        if (state.empty() || state[0].text(0) != "pending")
            co_return make_error(errc::conflict,
                                 "Only a pending (submitted) version can be approved; this one is " +
                                     (state.empty() ? std::string("gone") : state[0].str(0)));
        auto since =
            co_await sql(c,
                         "SELECT coalesce(max(id), 0), (SELECT actor FROM model_events WHERE version_id = "
                         "$1 AND action = 'submitted' ORDER BY id DESC LIMIT 1) FROM model_events "
                         "WHERE version_id = $1 AND action = 'submitted'",
                         v.id);
        const auto submitted_at = since[0].i64(0);
        if (since[0].text(1) == who.actor)
            co_return make_error(errc::access_denied, "The submitter of a version cannot approve it");
        auto mine =
            co_await sql(c,
                         "SELECT 1 FROM model_events WHERE version_id = $1 AND action = 'approval' AND "
                         "id > $2 AND actor = $3",
                         v.id, submitted_at, who.actor);
        if (!mine.empty())
            co_return make_error(errc::conflict, "You already approved this version");
        auto count =
            co_await sql(c,
                         "SELECT count(DISTINCT actor) FROM model_events WHERE version_id = $1 AND action = "
                         "'approval' AND id > $2",
                         v.id, submitted_at);
        const bool complete = count[0].i64(0) + 1 >= m.policy.required_approvals;
        std::optional<std::string> to;
        if (complete) {
            co_await sql(c, "UPDATE model_versions SET state = 'approved' WHERE id = $1", v.id);
            to = "approved";
        }
        co_await record(c, m.id, v.id, "approval", who, comment, std::string("pending"), to);
        if (complete)
            co_await emit_version_event(c, m, "version.approved", v.id, v.number, v.label, "approved", who,
                                        comment);
        co_return ok();
    };
    auto done = co_await transact(pool_, work);
    if (!done)
        co_return std::move(done).error();
    co_return co_await get_version(m, std::to_string(v.number), false);
}

asio::awaitable<result<model_version>>
model_registry::transition_version(const model& m, const model_version& v, transition t,
                                   const audit_context& who, std::string comment)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<void>> {
        co_await events::lock_model(c, m.id);
        auto state = co_await sql(c, "SELECT state FROM model_versions WHERE id = $1 FOR UPDATE", v.id);
        if (state.empty())
            co_return make_error(errc::not_found, "No such version");
        const std::string from = state[0].str(0);
        std::string to, action;
        bool allowed = false;
        switch (t) {
        case transition::submit:
            allowed = from == "draft" || from == "rejected";
            to = "pending";
            action = "submitted";
            break;
        case transition::reject:
            allowed = from == "pending";
            to = "rejected";
            action = "rejected";
            break;
        case transition::deprecate:
            allowed = from != "archived" && from != "deprecated";
            to = "deprecated";
            action = "deprecated";
            break;
        case transition::archive:
            allowed = from != "archived";
            to = "archived";
            action = "archived";
            break;
        }
        if (!allowed)
            co_return make_error(errc::conflict, "A " + from + " version cannot become " + to);
        co_await sql(c, "UPDATE model_versions SET state = $2 WHERE id = $1", v.id, to);
        co_await record(c, m.id, v.id, action, who, comment, from, to);
        const std::string type = "version." + action;
        co_await emit_version_event(c, m, type, v.id, v.number, v.label, to, who, comment);
        co_return ok();
    };
    auto done = co_await transact(pool_, work);
    if (!done)
        co_return std::move(done).error();
    co_return co_await get_version(m, std::to_string(v.number), false);
}

asio::awaitable<std::vector<model_event>> model_registry::history(std::int64_t model_id,
                                                                  std::optional<std::int64_t> version_id,
                                                                  std::int64_t after, std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        "SELECT e.id, v.number, e.action, e.actor, e.comment, e.from_state, e.to_state, "
        "e.details::text, " DEPOT_MS("e.at") " FROM model_events e LEFT JOIN model_versions v ON "
                                             "v.id = e.version_id WHERE e.model_id = $1 AND "
                                             "($2::bigint IS NULL OR e.version_id = $2) AND e.id > $3 "
                                             "ORDER BY e.id LIMIT $4",
        model_id, version_id, after, static_cast<std::int64_t>(limit));
    std::vector<model_event> out;
    for (auto r : rs) {
        model_event e{.id = r.i64(0),
                      .version = std::nullopt,
                      .action = r.str(2),
                      .actor = r.str(3),
                      .comment = r.str(4),
                      .from_state = r.opt_str(5),
                      .to_state = r.opt_str(6),
                      .details_json = r.str(7),
                      .at = from_millis(r.i64(8))};
        if (!r.is_null(1))
            e.version = static_cast<int>(r.i64(1));
        out.push_back(std::move(e));
    }
    co_return out;
}

} // namespace depot::registry
