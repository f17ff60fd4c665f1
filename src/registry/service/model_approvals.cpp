// model_registry: the approval workflow (approve, the other transitions) and a model's history.
#include "registry/repo/model_approvals.hpp"

#include "registry/repo/events.hpp"
#include "registry/repo/model_aliases.hpp"
#include "registry/repo/model_detail.hpp"
#include "registry/repo/model_versions.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/transaction.hpp"

#include <algorithm>

namespace depot::registry {
using namespace model_detail;

asio::awaitable<result<model_version>> model_registry::approve(const model& m, const model_version& v,
                                                               const audit_context& who, std::string comment)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<void>> {
        co_await events::lock_model(c, m.id);
        const auto state = co_await lock_version_state(c, v.id);
        if (!state || *state != "pending")
            co_return make_error(errc::conflict,
                                 "Only a pending (submitted) version can be approved; this one is " +
                                     state.value_or("gone"));
        // Four-eyes: the approver is someone other than whoever made what is approved. The version row is
        // locked; its author and contributors were fixed when it was created.
        const auto submitted = co_await last_submission(c, v.id);
        if (submitted.actor == who.actor || co_await ever_submitted(c, v.id, who.actor))
            co_return make_error(errc::access_denied, "The submitter of a version cannot approve it");
        const auto current = co_await read_version(c, v.id);
        if (current.created_by == who.actor)
            co_return make_error(errc::access_denied, "The author of a version cannot approve it");
        if (m.policy.four_eyes == four_eyes_rule::all_contributors &&
            std::find(current.contributors.begin(), current.contributors.end(), who.actor) !=
                current.contributors.end())
            co_return make_error(errc::access_denied,
                                 "Someone who wrote a file of a version cannot approve it (the model's "
                                 "four-eyes rule is all_contributors)");
        if (co_await approved_since(c, v.id, submitted.event_id, who.actor))
            co_return make_error(errc::conflict, "You already approved this version");
        // The approvals that count are those of people who may still approve (not of one who left since).
        const auto approvers =
            co_await approvers_since(c, v.id, submitted.event_id, m.team_id, m.policy.approver_role);
        const bool complete = approvers + 1 >= m.policy.required_approvals;
        std::optional<std::string> to;
        if (complete) {
            co_await mark_version_approved(c, v.id);
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
        const auto state = co_await lock_version_state(c, v.id);
        if (!state)
            co_return make_error(errc::not_found, "No such version");
        const std::string from = *state;
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
        // A protected alias points only at an approved version: it would go on serving a deprecated one, and
        // resolve to nothing at an archived one, so it must be moved first.
        if (t == transition::deprecate || t == transition::archive) {
            const auto aliases = co_await aliases_of(c, m.id);
            for (const auto& a : aliases)
                if (a.version == v.number && m.policy.protects(a.name))
                    co_return make_error(errc::conflict, "The protected alias '" + a.name +
                                                             "' points at this version: move it to another "
                                                             "approved version first");
        }
        co_await set_version_state(c, v.id, to);
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
    co_return co_await model_events_after(*conn, model_id, version_id, after,
                                          static_cast<std::int64_t>(limit));
}

} // namespace depot::registry
