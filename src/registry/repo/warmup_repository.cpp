#include "registry/repo/warmup_repository.hpp"

#include "common/json.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/events.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/transaction.hpp"
#include "storage/sealed/sealed_format.hpp"

namespace depot::registry {
namespace {

std::vector<std::string> json_strings(std::string_view text)
{
    std::vector<std::string> out;
    auto j = json_parse(text);
    if (j && j->is_array())
        for (const auto& e : j->get_array())
            if (e.is_string())
                out.emplace_back(e.get_string());
    return out;
}

std::string json_array(const std::vector<std::string>& v)
{
    boost::json::array j;
    j.reserve(v.size());
    for (const auto& s : v)
        j.push_back(json_string(s));
    return boost::json::serialize(j);
}

#define DEPOT_JOB_COLUMNS                                                                                    \
    "j.id, j.team_id, j.model_id, j.version_id, t.name, m.name, v.number, j.alias, j.trigger, j.state, "     \
    "array_to_json(j.instances)::text, j.requested_by, " DEPOT_MS("j.created_at") ", " DEPOT_MS(             \
        "j.finished_at") ", v.file_count, v.total_bytes "                                                    \
                         "FROM warmup_jobs j JOIN teams t ON t.id = j.team_id JOIN models m ON m.id = "      \
                         "j.model_id JOIN model_versions v ON v.id = j.version_id "

warmup_job job_of(const pg::row& r)
{
    warmup_job j;
    j.id = r.i64(0);
    j.team_id = r.i64(1);
    j.model_id = r.i64(2);
    j.version_id = r.i64(3);
    j.team = r.str(4);
    j.model = r.str(5);
    j.version = static_cast<int>(r.i64(6));
    j.alias = r.opt_str(7);
    j.trigger = r.str(8);
    j.state = r.str(9);
    j.instances = json_strings(r.text(10));
    j.requested_by = r.str(11);
    j.created_at = from_millis(r.i64(12));
    j.finished_at = opt_time(r, 13);
    j.files_total = r.i64(14);
    j.bytes_total = r.i64(15);
    return j;
}

asio::awaitable<std::vector<warmup_instance_progress>> progress_of(pg::connection& c, std::int64_t job_id)
{
    auto rs =
        co_await sql(c,
                     "SELECT instance, state, files_total, files_done, bytes_total, bytes_done, errors, "
                     "last_error, " DEPOT_MS("started_at") ", " DEPOT_MS("updated_at") " FROM "
                                                                                       "warmup_progress "
                                                                                       "WHERE job_id = "
                                                                                       "$1 ORDER BY "
                                                                                       "instance",
                     job_id);
    std::vector<warmup_instance_progress> out;
    for (auto r : rs)
        out.push_back({.instance = r.str(0),
                       .state = r.str(1),
                       .files_total = r.i64(2),
                       .files_done = r.i64(3),
                       .bytes_total = r.i64(4),
                       .bytes_done = r.i64(5),
                       .errors = r.i64(6),
                       .last_error = r.opt_str(7),
                       .started_at = from_millis(r.i64(8)),
                       .updated_at = from_millis(r.i64(9))});
    co_return out;
}

/// Inside a transaction: completes the job if it is running and every instance it waits for has finished
/// or is no longer alive (and at least one finished), emitting its event. Returns true if it completed it.
asio::awaitable<bool> try_complete(pg::connection& c, std::int64_t job_id)
{
    auto rs = co_await sql(c, "SELECT " DEPOT_JOB_COLUMNS "WHERE j.id = $1 FOR UPDATE OF j", job_id);
    if (rs.empty())
        co_return false;
    const auto job = job_of(rs[0]);
    if (job.state != "running")
        co_return false;
    // The instance list travels as JSON, which survives any instance name.
    auto waiting =
        co_await sql(c,
                     "SELECT count(*) FROM json_array_elements_text($1::json) AS i (id) WHERE NOT EXISTS "
                     "(SELECT 1 FROM warmup_progress p WHERE p.job_id = $2 AND p.instance = i.id AND "
                     "p.state <> 'running') AND EXISTS (SELECT 1 FROM depot_instances d WHERE d.id = "
                     "i.id AND d.expires_at > now())",
                     json_array(job.instances), job_id);
    if (waiting[0].i64(0) > 0)
        co_return false;
    auto progress = co_await progress_of(c, job_id);
    bool finished = false, failed = false;
    std::int64_t errors = 0;
    boost::json::array instances;
    for (const auto& p : progress) {
        if (p.state == "running")
            continue;
        finished = true;
        failed = failed || p.state == "failed" || p.errors > 0;
        errors += p.errors;
        boost::json::object instance;
        instance["instance"] = json_string(p.instance);
        instance["state"] = json_string(p.state);
        instance["files_done"] = p.files_done;
        instance["files_total"] = p.files_total;
        instance["bytes_done"] = p.bytes_done;
        instance["bytes_total"] = p.bytes_total;
        instance["errors"] = p.errors;
        instance["last_error"] = p.last_error ? json_string(*p.last_error) : boost::json::value(nullptr);
        instances.push_back(std::move(instance));
    }
    if (!finished)
        co_return false;
    const std::string state = failed ? "failed" : "completed";
    co_await sql(c, "UPDATE warmup_jobs SET state = $2, finished_at = now() WHERE id = $1", job_id, state);
    auto bucket = co_await sql(c, "SELECT bucket_id FROM models WHERE id = $1", job.model_id);
    boost::json::object data;
    data["team"] = json_string(job.team);
    data["model"] = json_string(job.model);
    data["warmup_id"] = job.id;
    data["version"] = job.version;
    data["alias"] = job.alias ? json_string(*job.alias) : boost::json::value(nullptr);
    data["trigger"] = json_string(job.trigger);
    data["files_total"] = job.files_total;
    data["bytes_total"] = job.bytes_total;
    data["errors"] = errors;
    data["instances"] = std::move(instances);
    const std::string type = failed ? "warmup.failed" : "warmup.completed";
    co_await events::emit_model_event(c, type, job.team_id, job.model_id, bucket[0].i64(0), job.version_id,
                                      boost::json::serialize(data));
    co_return true;
}

} // namespace

asio::awaitable<std::int64_t> create_warmup_job(pg::connection& c, std::int64_t team_id,
                                                std::int64_t model_id, std::int64_t version_id,
                                                std::optional<std::string> alias, std::string_view trigger,
                                                std::string_view actor)
{
    const std::string trig(trigger);
    const std::string who(actor);
    auto rs =
        co_await sql(c,
                     "INSERT INTO warmup_jobs (team_id, model_id, version_id, alias, trigger, instances, "
                     "requested_by) VALUES ($1, $2, $3, $4, $5, ARRAY(SELECT id FROM depot_instances "
                     "WHERE expires_at > now() ORDER BY id), $6) RETURNING id",
                     team_id, model_id, version_id, alias, trig, who);
    co_await sql(c, "SELECT pg_notify('depot_warmups', '')");
    co_return rs[0].i64(0);
}

asio::awaitable<void> warmup_on_event(pg::connection& c, std::string_view type, std::int64_t team_id,
                                      std::int64_t model_id, std::int64_t version_id,
                                      std::optional<std::string> alias, std::string_view actor)
{
    auto rs =
        co_await sql(c,
                     "SELECT array_to_json(coalesce(m.warmup_on, t.warmup_on))::text FROM models m JOIN "
                     "teams t ON t.id = m.team_id WHERE m.id = $1",
                     model_id);
    if (rs.empty())
        co_return;
    bool wanted = false;
    for (const auto& e : json_strings(rs[0].text(0)))
        wanted = wanted || e == type || (alias && e == std::string(type) + ":" + *alias);
    if (wanted)
        co_await create_warmup_job(c, team_id, model_id, version_id, std::move(alias), type, actor);
}

asio::awaitable<warmup_job> warmup_repository::create(const audit_context& who, std::int64_t team_id,
                                                      std::int64_t model_id, std::int64_t version_id,
                                                      std::optional<std::string> alias,
                                                      std::string_view actor)
{
    std::int64_t id = 0;
    co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        id = co_await create_warmup_job(c, team_id, model_id, version_id, alias, "api", actor);
        auto names = co_await sql(c,
                                  "SELECT t.name, m.name FROM models m JOIN teams t ON t.id = m.team_id "
                                  "WHERE m.id = $1",
                                  model_id);
        const std::string team = names.empty() ? std::string() : names[0].str(0);
        const std::string resource =
            names.empty() ? std::string() : team + "/" + names[0].str(1) + "/warmups/" + std::to_string(id);
        std::string details = "{\"version_id\":" + std::to_string(version_id);
        if (alias)
            details += ",\"alias\":" + audit_quote(*alias);
        details += "}";
        co_await append_audit(c, who, "warmup.create", resource, team, details);
        co_return result<void>{};
    });
    auto job = co_await get(model_id, id);
    co_return std::move(*job);
}

asio::awaitable<std::vector<warmup_job>> warmup_repository::list(std::int64_t model_id, std::int64_t before,
                                                                 std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    const auto lim = static_cast<std::int64_t>(limit);
    auto rs =
        co_await sql(*conn,
                     "SELECT " DEPOT_JOB_COLUMNS "WHERE j.model_id = $1 AND ($2 = 0 OR j.id < $2) ORDER BY "
                     "j.id DESC LIMIT $3",
                     model_id, before, lim);
    std::vector<warmup_job> out;
    for (auto r : rs)
        out.push_back(job_of(r));
    for (auto& j : out)
        j.progress = co_await progress_of(*conn, j.id);
    co_return out;
}

asio::awaitable<std::optional<warmup_job>> warmup_repository::get(std::int64_t model_id, std::int64_t job_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, "SELECT " DEPOT_JOB_COLUMNS "WHERE j.model_id = $1 AND j.id = $2", model_id,
                           job_id);
    if (rs.empty())
        co_return std::nullopt;
    auto j = job_of(rs[0]);
    j.progress = co_await progress_of(*conn, j.id);
    co_return j;
}

asio::awaitable<std::vector<std::string>> warmup_repository::team_policy(std::int64_t team_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, "SELECT array_to_json(warmup_on)::text FROM teams WHERE id = $1", team_id);
    co_return rs.empty() ? std::vector<std::string>{} : json_strings(rs[0].text(0));
}

asio::awaitable<void> warmup_repository::set_team_policy(const audit_context& who, std::int64_t team_id,
                                                         const std::vector<std::string>& events)
{
    const std::string list = json_array(events);
    co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs =
            co_await sql(c,
                         "UPDATE teams SET warmup_on = ARRAY(SELECT json_array_elements_text($2::json)) "
                         "WHERE id = $1 RETURNING name",
                         team_id, list);
        if (!rs.empty())
            co_await append_audit(c, who, "warmup.policy.set", rs[0].str(0) + "/warmup-policy", rs[0].str(0),
                                  "{\"warmup_on\":" + list + "}");
        co_return result<void>{};
    });
}

asio::awaitable<std::optional<std::vector<std::string>>>
warmup_repository::model_policy(std::int64_t model_id)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn, "SELECT array_to_json(warmup_on)::text FROM models WHERE id = $1", model_id);
    if (rs.empty() || rs[0].is_null(0))
        co_return std::nullopt;
    co_return json_strings(rs[0].text(0));
}

asio::awaitable<void>
warmup_repository::set_model_policy(const audit_context& who, std::int64_t model_id,
                                    const std::optional<std::vector<std::string>>& events)
{
    std::optional<std::string> list;
    if (events)
        list = json_array(*events);
    co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs = co_await sql(c,
                               "UPDATE models m SET warmup_on = CASE WHEN $2::json IS NULL THEN NULL ELSE "
                               "ARRAY(SELECT json_array_elements_text($2::json)) END FROM teams t "
                               "WHERE m.id = $1 AND t.id = m.team_id RETURNING t.name, m.name",
                               model_id, list);
        if (!rs.empty()) {
            const std::string team = rs[0].str(0);
            const std::string details = "{\"warmup_on\":" + list.value_or("null") + "}";
            co_await append_audit(c, who, "warmup.policy.set", team + "/" + rs[0].str(1) + "/warmup-policy",
                                  team, details);
        }
        co_return result<void>{};
    });
}

asio::awaitable<void> warmup_repository::heartbeat(std::string_view instance, std::chrono::milliseconds ttl)
{
    auto conn = co_await pool_.acquire();
    const std::string id(instance);
    const auto ms = static_cast<std::int64_t>(ttl.count());
    co_await sql(
        *conn,
        "INSERT INTO depot_instances (id, expires_at) VALUES ($1, now() + $2 * interval '1 millisecond') "
        "ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at",
        id, ms);
    // Rows of instances that died without deregistering (a crash, SIGKILL) are forgotten after a while.
    co_await sql(*conn, "DELETE FROM depot_instances WHERE expires_at < now() - interval '10 minutes'");
}

asio::awaitable<void> warmup_repository::deregister(std::string_view instance)
{
    {
        auto conn = co_await pool_.acquire();
        const std::string id(instance);
        co_await sql(*conn, "DELETE FROM depot_instances WHERE id = $1", id);
    }
    co_await sweep();
}

asio::awaitable<std::vector<warmup_job>> warmup_repository::due(std::string_view instance,
                                                                std::chrono::seconds max_age)
{
    auto conn = co_await pool_.acquire();
    const std::string id(instance);
    const auto age = static_cast<std::int64_t>(max_age.count());
    auto rs =
        co_await sql(*conn,
                     "SELECT " DEPOT_JOB_COLUMNS "WHERE j.created_at > now() - $2 * interval '1 second' AND "
                     "NOT EXISTS (SELECT 1 FROM warmup_progress p WHERE p.job_id = j.id AND p.instance = "
                     "$1 AND p.state <> 'running') ORDER BY j.id",
                     id, age);
    std::vector<warmup_job> out;
    for (auto r : rs)
        out.push_back(job_of(r));
    co_return out;
}

asio::awaitable<std::vector<warmup_file>> warmup_repository::files(std::int64_t version_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        "SELECT f.path, f.size, b.store_id, s.blob_offset, s.length, b.sealed IS NOT NULL, b.size "
        "FROM model_files f LEFT "
        "JOIN model_file_segments s ON s.version_id = f.version_id AND s.path = f.path LEFT "
        "JOIN blobs b ON b.id = s.blob_id WHERE f.version_id = $1 ORDER BY f.path, "
        "s.ordinal",
        version_id);
    std::vector<warmup_file> out;
    for (auto r : rs) {
        if (out.empty() || out.back().path != r.text(0))
            out.push_back({.path = r.str(0), .size = static_cast<std::uint64_t>(r.i64(1))});
        if (r.is_null(2))
            continue;
        if (r.boolean(5)) // an encrypted blob: its stored bytes, all of them (the cache holds them sealed)
            out.back().segments.push_back(
                {.store_id = r.str(2),
                 .offset = 0,
                 .length = storage::sealed::sealed_size(static_cast<std::uint64_t>(r.i64(6)))});
        else
            out.back().segments.push_back({.store_id = r.str(2),
                                           .offset = static_cast<std::uint64_t>(r.i64(3)),
                                           .length = static_cast<std::uint64_t>(r.i64(4))});
    }
    co_return out;
}

asio::awaitable<void> warmup_repository::begin(std::int64_t job_id, std::string_view instance,
                                               std::int64_t files_total, std::int64_t bytes_total)
{
    auto conn = co_await pool_.acquire();
    const std::string id(instance);
    co_await sql(
        *conn,
        "INSERT INTO warmup_progress (job_id, instance, files_total, bytes_total) VALUES ($1, $2, $3, "
        "$4) ON CONFLICT (job_id, instance) DO UPDATE SET state = 'running', files_total = "
        "excluded.files_total, bytes_total = excluded.bytes_total, files_done = 0, bytes_done = 0, "
        "errors = 0, last_error = NULL, started_at = now(), updated_at = now()",
        job_id, id, files_total, bytes_total);
}

asio::awaitable<void> warmup_repository::report(std::int64_t job_id, std::string_view instance,
                                                const warmup_report& r)
{
    const std::string id(instance);
    co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        co_await sql(c,
                     "UPDATE warmup_progress SET state = $3, files_done = $4, bytes_done = $5, errors = $6, "
                     "last_error = $7, updated_at = now() WHERE job_id = $1 AND instance = $2",
                     job_id, id, r.state, r.files_done, r.bytes_done, r.errors, r.last_error);
        if (r.state != "running")
            co_await try_complete(c, job_id);
        co_return result<void>{};
    });
}

asio::awaitable<std::size_t> warmup_repository::sweep()
{
    std::vector<std::int64_t> running;
    {
        auto conn = co_await pool_.acquire();
        auto rs = co_await sql(*conn, "SELECT id FROM warmup_jobs WHERE state = 'running' ORDER BY id");
        running = first_column(rs);
    }
    std::size_t done = 0;
    for (auto id : running) {
        bool completed = false;
        co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
            completed = co_await try_complete(c, id);
            co_return result<void>{};
        });
        done += completed ? 1 : 0;
    }
    co_return done;
}

} // namespace depot::registry
