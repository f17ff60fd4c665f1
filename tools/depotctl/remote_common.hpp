#pragma once
/// \file
/// What depotctl's remote command families (one file each: model, version, alias, snapshot, webhook,
/// warmup, push, pull, team, member, policy, bucket, user, key) share: the endpoint, the REST client, model
/// references, output helpers.

#include "cli.hpp"
#include "common/json.hpp"
#include "http_client.hpp"
#include "transfer.hpp"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace depot::ctl {

/// A JSON value (Boost.JSON, Depot's one JSON library: common/json.hpp).
using json = boost::json::value;

/// The member `field` of `o` (nullptr when `o` is not an object or has no such member).
const json* member(const json& o, std::string_view field) noexcept;
/// The elements of the array member `field` (none when absent or not an array).
const boost::json::array& items(const json& o, std::string_view field) noexcept;
/// Whether the member `field` is the boolean true.
bool flag(const json& o, std::string_view field) noexcept;
/// The numeric member `field` as a double (0 when absent or not a number).
double number(const json& o, std::string_view field) noexcept;
/// `j` as compact JSON text.
std::string dump(const json& j);

/// Where depotd is and who we are: flags, then DEPOT_* / AWS_* variables, then the AWS config and
/// credentials files. Throws failure (exit 2) when there are no credentials.
endpoint endpoint_of(const cli& c);

/// A path segment, percent-encoded.
std::string seg(const std::string& s);

/// "team/model[:ref]".
struct model_ref
{
    std::string team;
    std::string model;
    std::string ref; ///< empty when not given
    std::string base() const { return "/api/v1/teams/" + seg(team) + "/models/" + seg(model); }
};

/// Parses TEAM/MODEL (and :VERSION when `ref_allowed`); throws failure (exit 2) otherwise.
model_ref parse_model_ref(const std::string& text, bool ref_allowed);

/// A failed REST call: the problem+json title and detail when there is one.
[[noreturn]] void api_failure(const std::string& what, const http_response& resp);

class api_client
{
public:
    explicit api_client(const endpoint& ep) : conn_(ep) {}

    /// One call; the JSON answer ({} for an empty one). Throws failure for a non-2xx answer.
    json call(const std::string& method, const std::string& path, const json& body = nullptr,
              std::vector<std::pair<std::string, std::string>> headers = {})
    {
        http_request req;
        req.method = method;
        req.target = path;
        req.headers = std::move(headers);
        if (!body.is_null()) {
            req.body = dump(body);
            req.headers.emplace_back("content-type", "application/json");
        }
        auto resp = send_with_retry(conn_, req);
        if (resp.status / 100 != 2)
            api_failure(method + " " + path, resp);
        if (resp.body.empty())
            return boost::json::object();
        auto parsed = json_parse(resp.body);
        if (!parsed)
            throw failure(method + " " + path + ": the answer is not JSON");
        return std::move(*parsed);
    }

    /// Every item of a paginated list.
    boost::json::array all(const std::string& path)
    {
        boost::json::array all_items;
        std::string cursor;
        const char sep = path.find('?') == std::string::npos ? '?' : '&';
        for (;;) {
            auto target = path + sep + "limit=1000" + (cursor.empty() ? "" : "&cursor=" + seg(cursor));
            auto page = call("GET", target);
            for (const auto& item : items(page, "items"))
                all_items.push_back(item);
            const auto* next = member(page, "next_cursor");
            if (next == nullptr || !next->is_string())
                return all_items;
            cursor = std::string(next->get_string());
        }
    }

    http_connection& connection() { return conn_; }

private:
    http_connection conn_;
};

/// A field as text ("" when absent or null; non-strings as JSON).
std::string str(const json& o, const char* field);
void print_json(const json& j);
/// One line about a model version.
void print_version(const json& v);
/// The version fields of `version create` and `push`.
json version_body(const cli& c);
/// --parallel (1..64, default 8).
unsigned parallelism(const cli& c);
/// Progress bars only on a terminal, not with --json or --no-progress.
bool show_progress(const cli& c);
/// Hex SHA-256 of a file, counting bytes into `p` when given.
std::string sha256_of_file(const std::filesystem::path& path, progress* p);
/// "/bucket/key", percent-encoded.
std::string object_target(const std::string& bucket, const std::string& key);
/// The If-Match header --if-match asks for.
std::vector<std::pair<std::string, std::string>> if_match_header(const cli& c);

int model_command(const cli& c, const endpoint& ep);
int version_command(const cli& c, const endpoint& ep);
int alias_command(const cli& c, const endpoint& ep);
int snapshot_command(const cli& c, const endpoint& ep);
int webhook_command(const cli& c, const endpoint& ep);
int warmup_command(const cli& c, const endpoint& ep);
int push_command(const cli& c, const endpoint& ep);
int team_command(const cli& c, const endpoint& ep);
int member_command(const cli& c, const endpoint& ep);
int policy_command(const cli& c, const endpoint& ep);
int bucket_command(const cli& c, const endpoint& ep);
/// user, key and token through the REST API (an installation admin for other users than the caller).
int user_command(const cli& c, const endpoint& ep);
int key_command(const cli& c, const endpoint& ep);
int token_command(const cli& c, const endpoint& ep);
/// "a,b,c" -> ["a", "b", "c"].
json comma_list(const std::string& text);
/// The approval policy fields --required-approvals, --approver-role, --protected-aliases ask for.
boost::json::object policy_body(const cli& c);
/// The scope SCOPE flags ask for, as a JSON object (null for none).
json scope_body(const cli& c);
/// --expires-in as seconds (absent: null). Throws failure (exit 2) unless positive.
json expires_in_body(const cli& c);
int pull_command(const cli& c, const endpoint& ep);

} // namespace depot::ctl
