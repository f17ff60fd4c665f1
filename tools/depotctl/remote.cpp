// depotctl's remote commands: the model registry through the REST API (/api/v1), and `push` / `pull`
// of model directories over S3 and the read-only model view. Everything goes through a running depotd,
// authenticated with an S3 access key (SigV4) or, for REST-only commands, an API token.
#include "cli.hpp"
#include "common/hash.hpp"
#include "common/uri.hpp"
#include "http_client.hpp"
#include "transfer.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <set>
#include <thread>
#include <unistd.h>

namespace depot::ctl {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::size_t lookup_batch = 1000; // the server's limit per content lookup
constexpr std::size_t delete_batch = 1000; // and per DeleteObjects
constexpr std::uint64_t max_single_put = 5ull << 30;

endpoint endpoint_of(const cli& c)
{
    endpoint ep;
    try {
        parse_endpoint_url(c.get("--endpoint", env_or("DEPOT_ENDPOINT",
                                                      env_or("AWS_ENDPOINT_URL", "http://127.0.0.1:9000"))),
                           ep);
    } catch (const std::invalid_argument& e) {
        throw failure(e.what(), 2);
    }
    ep.region = c.get("--region", env_or("AWS_REGION", env_or("AWS_DEFAULT_REGION", "us-east-1")));
    ep.ca_file = c.get("--ca-bundle", env_or("AWS_CA_BUNDLE", ""));
    ep.token = c.get("--token", env_or("DEPOT_TOKEN", ""));
    if (c.has("--access-key") || c.has("--secret-key")) {
        ep.access_key = c.get("--access-key");
        ep.secret = c.get("--secret-key");
    } else if (!env_or("AWS_ACCESS_KEY_ID", "").empty()) {
        ep.access_key = env_or("AWS_ACCESS_KEY_ID", "");
        ep.secret = env_or("AWS_SECRET_ACCESS_KEY", "");
    } else if (c.has("--profile") || !env_or("AWS_PROFILE", "").empty() || ep.token.empty()) {
        auto profile = c.get("--profile", env_or("AWS_PROFILE", "default"));
        fs::path file = env_or("AWS_SHARED_CREDENTIALS_FILE", "");
        if (file.empty())
            file = fs::path(env_or("HOME", ".")) / ".aws" / "credentials";
        if (!read_credentials_profile(file, profile, ep) &&
            (c.has("--profile") || !env_or("AWS_PROFILE", "").empty()))
            throw failure("no profile '" + profile + "' in " + file.string(), 2);
    }
    if (!ep.can_sign() && ep.token.empty())
        throw failure("no credentials: set an access key (--access-key/--secret-key, AWS_ACCESS_KEY_ID, "
                      "--profile) or an API token (--token, DEPOT_TOKEN)",
                      2);
    if (c.has("--timeout")) {
        try {
            ep.timeout = std::chrono::seconds(std::stol(c.get("--timeout")));
        } catch (const std::exception&) {
            throw failure("--timeout needs a number of seconds", 2);
        }
    }
    return ep;
}

std::string seg(const std::string& s)
{
    return uri_encode(s);
}

/// "team/model[:ref]".
struct model_ref
{
    std::string team;
    std::string model;
    std::string ref; ///< empty when not given
    std::string base() const { return "/api/v1/teams/" + seg(team) + "/models/" + seg(model); }
};

model_ref parse_model_ref(const std::string& text, bool ref_allowed)
{
    model_ref r;
    auto slash = text.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == text.size())
        throw failure(
            "expected TEAM/MODEL" + std::string(ref_allowed ? "[:VERSION]" : "") + ", got '" + text + "'", 2);
    r.team = text.substr(0, slash);
    auto rest = text.substr(slash + 1);
    auto colon = rest.find(':');
    if (colon != std::string::npos) {
        if (!ref_allowed)
            throw failure("'" + text + "': no version here, only TEAM/MODEL", 2);
        r.ref = rest.substr(colon + 1);
        rest = rest.substr(0, colon);
        if (r.ref.empty())
            throw failure("'" + text + "': empty version after ':'", 2);
    }
    if (rest.empty() || rest.find('/') != std::string::npos)
        throw failure("expected TEAM/MODEL, got '" + text + "'", 2);
    r.model = rest;
    return r;
}

/// A failed REST call: the problem+json title and detail when there is one.
[[noreturn]] void api_failure(const std::string& what, const http_response& resp)
{
    std::string message = what + ": HTTP " + std::to_string(resp.status);
    auto body = json::parse(resp.body, nullptr, false);
    if (body.is_object()) {
        if (body.contains("title") && body["title"].is_string())
            message += " " + body["title"].get<std::string>();
        if (body.contains("detail") && body["detail"].is_string())
            message += ": " + body["detail"].get<std::string>();
    } else if (!resp.body.empty()) {
        // S3 errors are XML: the Code and Message elements.
        pugi::xml_document doc;
        if (doc.load_string(resp.body.c_str())) {
            auto err = doc.child("Error");
            message += std::string(" ") + err.child_value("Code") + ": " + err.child_value("Message");
        }
    }
    throw failure(message);
}

class api_client
{
public:
    explicit api_client(const endpoint& ep) : conn_(ep) {}

    json call(const std::string& method, const std::string& path, const json& body = nullptr,
              std::vector<std::pair<std::string, std::string>> headers = {})
    {
        http_request req;
        req.method = method;
        req.target = path;
        req.headers = std::move(headers);
        if (!body.is_null()) {
            req.body = body.dump();
            req.headers.emplace_back("content-type", "application/json");
        }
        auto resp = send_with_retry(conn_, req);
        if (resp.status / 100 != 2)
            api_failure(method + " " + path, resp);
        if (resp.body.empty())
            return json::object();
        auto parsed = json::parse(resp.body, nullptr, false);
        if (parsed.is_discarded())
            throw failure(method + " " + path + ": the answer is not JSON");
        return parsed;
    }

    /// Every item of a paginated list.
    json all(const std::string& path)
    {
        json items = json::array();
        std::string cursor;
        const char sep = path.find('?') == std::string::npos ? '?' : '&';
        for (;;) {
            auto target = path + sep + "limit=1000" + (cursor.empty() ? "" : "&cursor=" + seg(cursor));
            auto page = call("GET", target);
            for (auto& item : page["items"])
                items.push_back(std::move(item));
            if (!page.contains("next_cursor") || page["next_cursor"].is_null())
                return items;
            cursor = page["next_cursor"].get<std::string>();
        }
    }

    http_connection& connection() { return conn_; }

private:
    http_connection conn_;
};

std::string str(const json& o, const char* field)
{
    auto it = o.find(field);
    if (it == o.end() || it->is_null())
        return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
}

void print_json(const json& j)
{
    std::cout << j.dump() << "\n";
}

void print_version(const json& v)
{
    std::cout << "version " << str(v, "number");
    if (!str(v, "label").empty())
        std::cout << " (" << str(v, "label") << ")";
    std::cout << "  " << str(v, "state") << "  " << str(v, "file_count") << " files, "
              << human_bytes(v.value("total_bytes", 0.0)) << "  by " << str(v, "created_by") << " at "
              << str(v, "created_at");
    if (v.contains("aliases") && !v["aliases"].empty()) {
        std::cout << "  aliases:";
        for (const auto& a : v["aliases"])
            std::cout << " " << (a.is_string() ? a.get<std::string>() : str(a, "name"));
    }
    std::cout << "\n";
}

/// The version fields of `version create` and `push`.
json version_body(const cli& c)
{
    json body = json::object();
    for (auto [flag, field] : {std::pair{"--label", "label"}, std::pair{"--description", "description"},
                               std::pair{"--framework", "framework"}, std::pair{"--format", "format"},
                               std::pair{"--run-url", "run_url"}, std::pair{"--snapshot", "snapshot"}})
        if (c.has(flag))
            body[field] = c.get(flag);
    if (c.has("--parent")) {
        try {
            body["parent"] = std::stoi(c.get("--parent"));
        } catch (const std::exception&) {
            throw failure("--parent needs a version number", 2);
        }
    }
    for (auto [flag, field] : {std::pair{"--labels", "labels"}, std::pair{"--metrics", "metrics"}}) {
        if (!c.has(flag))
            continue;
        auto parsed = json::parse(c.get(flag), nullptr, false);
        if (!parsed.is_object())
            throw failure(std::string(flag) + " needs a JSON object", 2);
        body[field] = parsed;
    }
    return body;
}

unsigned parallelism(const cli& c)
{
    try {
        auto n = std::stoi(c.get("--parallel", "8"));
        if (n >= 1 && n <= 64)
            return static_cast<unsigned>(n);
    } catch (const std::exception&) {
    }
    throw failure("--parallel needs a number from 1 to 64", 2);
}

bool show_progress(const cli& c)
{
    return !c.has("--json") && !c.has("--no-progress") && ::isatty(STDERR_FILENO);
}

std::string sha256_of_file(const fs::path& path, progress* p)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw failure("cannot read " + path.string());
    hasher h(digest_kind::sha256);
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        auto n = static_cast<std::size_t>(in.gcount());
        if (n == 0)
            break;
        h.update(std::string_view(buf.data(), n));
        if (p)
            p->bytes_done += n;
    }
    if (in.bad())
        throw failure("cannot read " + path.string());
    return to_hex(h.finish());
}

std::string xml_escape(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        switch (ch) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        default:
            out += ch;
        }
    }
    return out;
}

std::string object_target(const std::string& bucket, const std::string& key)
{
    return "/" + seg(bucket) + "/" + uri_encode(key, true);
}

// ---------------------------------------------------------------------------------------------- registry

int model_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    api_client api(ep);
    if (p.size() >= 3 && p[1] == "list") {
        auto items = api.all("/api/v1/teams/" + seg(p[2]) + "/models");
        if (as_json)
            print_json(items);
        else
            for (const auto& m : items)
                std::cout << str(m, "name") << "\ts3://" << str(m, "bucket") << "/" << str(m, "prefix")
                          << "\t" << str(m, "version_count") << " versions\t" << str(m, "description")
                          << "\n";
        return 0;
    }
    if (p.size() >= 3 && p[1] == "create") {
        auto ref = parse_model_ref(p[2], false);
        if (!c.has("--bucket"))
            throw failure("model create needs --bucket (and --prefix, default MODEL/)", 2);
        json body{{"name", ref.model},
                  {"bucket", c.get("--bucket")},
                  {"prefix", c.get("--prefix", ref.model + "/")}};
        if (c.has("--description"))
            body["description"] = c.get("--description");
        auto m = api.call("POST", "/api/v1/teams/" + seg(ref.team) + "/models", body);
        if (as_json)
            print_json(m);
        else
            std::cout << "created model " << ref.team << "/" << ref.model << " on s3://" << str(m, "bucket")
                      << "/" << str(m, "prefix") << "\n";
        return 0;
    }
    if (p.size() >= 3 && p[1] == "show") {
        auto ref = parse_model_ref(p[2], false);
        auto m = api.call("GET", ref.base());
        auto aliases = api.all(ref.base() + "/aliases");
        if (as_json) {
            m["aliases"] = aliases;
            print_json(m);
            return 0;
        }
        std::cout << ref.team << "/" << ref.model << "  s3://" << str(m, "bucket") << "/" << str(m, "prefix")
                  << "\n  " << str(m, "version_count") << " versions, created by " << str(m, "created_by")
                  << " at " << str(m, "created_at") << "\n  policy: " << m["policy"].dump() << "\n";
        if (!str(m, "description").empty())
            std::cout << "  " << str(m, "description") << "\n";
        for (const auto& a : aliases)
            std::cout << "  alias " << str(a, "name") << " -> " << str(a, "version")
                      << (a.value("protected", false) ? " (protected)" : "") << "\n";
        return 0;
    }
    throw failure("usage: depotctl model create|list|show ...", 2);
}

int version_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    if (p.size() < 3)
        throw failure("usage: depotctl version create|list|show|diff|submit|approve|reject|deprecate|archive "
                      "TEAM/MODEL[:VERSION]",
                      2);
    api_client api(ep);
    const auto& verb = p[1];
    if (verb == "list") {
        auto ref = parse_model_ref(p[2], false);
        auto items = api.all(ref.base() + "/versions");
        if (as_json)
            print_json(items);
        else
            for (const auto& v : items)
                print_version(v);
        return 0;
    }
    if (verb == "create") {
        auto ref = parse_model_ref(p[2], false);
        auto v = api.call("POST", ref.base() + "/versions", version_body(c));
        if (as_json)
            print_json(v);
        else
            print_version(v);
        return 0;
    }
    auto ref = parse_model_ref(p[2], true);
    if (ref.ref.empty())
        ref.ref = "latest";
    const auto vpath = ref.base() + "/versions/" + seg(ref.ref);
    if (verb == "show") {
        auto v = api.call("GET", vpath);
        if (c.has("--files"))
            v["files"] = api.all(vpath + "/files");
        if (as_json) {
            print_json(v);
            return 0;
        }
        print_version(v);
        if (!str(v, "description").empty())
            std::cout << "  " << str(v, "description") << "\n";
        if (v.contains("metrics") && !v["metrics"].empty())
            std::cout << "  metrics: " << v["metrics"].dump() << "\n";
        if (v.contains("files"))
            for (const auto& f : v["files"])
                std::cout << "  " << str(f, "sha256").substr(0, 12) << "  " << str(f, "size") << "\t"
                          << str(f, "path") << "\n";
        return 0;
    }
    if (verb == "diff") {
        if (p.size() < 4)
            throw failure("usage: depotctl version diff TEAM/MODEL:VERSION OTHER_VERSION", 2);
        auto d = api.call("GET", vpath + "/diff?against=" + seg(p[3]));
        if (as_json) {
            print_json(d);
            return 0;
        }
        for (const auto& f : d["added"])
            std::cout << "+ " << str(f, "path") << "\n";
        for (const auto& f : d["removed"])
            std::cout << "- " << str(f, "path") << "\n";
        for (const auto& f : d["changed"])
            std::cout << "~ " << str(f, "path") << "\n";
        return 0;
    }
    static const std::set<std::string> transitions = {"submit", "approve", "reject", "deprecate", "archive"};
    if (transitions.count(verb)) {
        json body = json::object();
        if (c.has("--comment"))
            body["comment"] = c.get("--comment");
        auto v = api.call("POST", vpath + "/" + verb, body);
        if (as_json)
            print_json(v);
        else
            print_version(v);
        return 0;
    }
    throw failure("unknown version command '" + verb + "'", 2);
}

std::vector<std::pair<std::string, std::string>> if_match_header(const cli& c)
{
    if (!c.has("--if-match"))
        return {};
    return {{"if-match", c.get("--if-match")}};
}

int alias_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    api_client api(ep);
    if (p.size() >= 3 && p[1] == "list") {
        auto ref = parse_model_ref(p[2], false);
        auto items = api.all(ref.base() + "/aliases");
        if (as_json)
            print_json(items);
        else
            for (const auto& a : items)
                std::cout << str(a, "name") << "\t" << str(a, "version") << "\t"
                          << (a.value("protected", false) ? "protected" : "") << "\n";
        return 0;
    }
    if (p.size() >= 5 && p[1] == "set") {
        auto ref = parse_model_ref(p[2], false);
        json body{{"version", p[4]}};
        if (std::all_of(p[4].begin(), p[4].end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
            body["version"] = std::stoi(p[4]);
        auto a = api.call("PUT", ref.base() + "/aliases/" + seg(p[3]), body, if_match_header(c));
        if (as_json)
            print_json(a);
        else
            std::cout << ref.team << "/" << ref.model << ":" << str(a, "name") << " -> " << str(a, "version")
                      << "\n";
        return 0;
    }
    if (p.size() >= 4 && p[1] == "delete") {
        auto ref = parse_model_ref(p[2], false);
        api.call("DELETE", ref.base() + "/aliases/" + seg(p[3]), nullptr, if_match_header(c));
        if (!as_json)
            std::cout << "deleted alias " << p[3] << "\n";
        return 0;
    }
    throw failure("usage: depotctl alias set TEAM/MODEL ALIAS VERSION | alias delete TEAM/MODEL ALIAS | "
                  "alias list TEAM/MODEL",
                  2);
}

// -------------------------------------------------------------------------------------------- snapshots

int snapshot_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    if (p.size() < 3)
        throw failure("usage: depotctl snapshot create|list|show|delete|restore BUCKET [NAME]", 2);
    api_client api(ep);
    const auto& verb = p[1];
    const auto base = "/api/v1/buckets/" + seg(p[2]) + "/snapshots";
    auto print = [&](const json& snap) {
        std::cout << str(snap, "name") << "\ts3://" << p[2] << "/" << str(snap, "s3_prefix") << "\t"
                  << (str(snap, "prefix").empty() ? "(whole bucket)" : "prefix " + str(snap, "prefix"))
                  << "\t" << str(snap, "created_by") << "\t" << str(snap, "created_at") << "\n";
    };
    if (verb == "list") {
        auto items = api.all(base);
        if (as_json)
            print_json(items);
        else
            for (const auto& snap : items)
                print(snap);
        return 0;
    }
    if (p.size() < 4)
        throw failure("usage: depotctl snapshot " + verb + " BUCKET NAME", 2);
    const auto one = base + "/" + seg(p[3]);
    json result;
    if (verb == "create") {
        json body{{"name", p[3]}};
        if (c.has("--prefix"))
            body["prefix"] = c.get("--prefix");
        result = api.call("POST", base, body);
    } else if (verb == "show") {
        result = api.call("GET", one);
    } else if (verb == "delete") {
        api.call("DELETE", one);
        if (!as_json)
            std::cout << "deleted snapshot " << p[3] << " of " << p[2] << "\n";
        return 0;
    } else if (verb == "restore") {
        json body = json::object();
        for (auto [flag, field] :
             {std::pair{"--target-bucket", "target_bucket"}, std::pair{"--target-prefix", "target_prefix"},
              std::pair{"--prefix", "prefix"}})
            if (c.has(flag))
                body[field] = c.get(flag);
        result = api.call("POST", one + "/restore", body);
        if (!as_json) {
            std::cout << "restored " << str(result, "objects") << " objects ("
                      << human_bytes(result.value("logical_bytes", 0.0)) << ", no bytes copied) into s3://"
                      << str(result, "target_bucket") << "/" << c.get("--target-prefix") << "\n";
            return 0;
        }
    } else {
        throw failure("unknown snapshot command '" + verb + "'", 2);
    }
    if (as_json)
        print_json(result);
    else
        print(result);
    return 0;
}

// ------------------------------------------------------------------------------------------------- push

struct local_file
{
    std::string path; ///< relative, '/'-separated
    fs::path source;
    std::uint64_t size = 0;
    std::string sha256; ///< hex
};

std::vector<local_file> scan_directory(const fs::path& dir)
{
    if (!fs::is_directory(dir))
        throw failure(dir.string() + " is not a directory", 2);
    std::vector<local_file> files;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink);
         it != fs::recursive_directory_iterator(); ++it) {
        if (!it->is_regular_file())
            continue;
        local_file f;
        f.source = it->path();
        f.path = fs::relative(it->path(), dir).generic_string();
        f.size = it->file_size();
        files.push_back(std::move(f));
    }
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    return files;
}

/// Keys under `prefix` in `bucket` (ListObjectsV2, every page).
std::vector<std::string> list_keys(http_connection& conn, const std::string& bucket,
                                   const std::string& prefix)
{
    std::vector<std::string> keys;
    std::string token;
    for (;;) {
        http_request req;
        req.target = "/" + seg(bucket) + "?list-type=2&prefix=" + seg(prefix) +
                     (token.empty() ? "" : "&continuation-token=" + seg(token));
        auto resp = send_with_retry(conn, req);
        if (resp.status != 200)
            api_failure("listing s3://" + bucket + "/" + prefix, resp);
        pugi::xml_document doc;
        if (!doc.load_string(resp.body.c_str()))
            throw failure("listing s3://" + bucket + "/" + prefix + ": the answer is not XML");
        auto root = doc.child("ListBucketResult");
        for (auto item : root.children("Contents"))
            keys.emplace_back(item.child_value("Key"));
        if (std::string_view(root.child_value("IsTruncated")) != "true")
            return keys;
        token = root.child_value("NextContinuationToken");
    }
}

void upload_file(http_connection& conn, const std::string& bucket, const std::string& key,
                 const local_file& f, std::uint64_t part_size, std::uint64_t threshold, progress& p)
{
    const auto target = object_target(bucket, key);
    if (f.size <= std::min(threshold, max_single_put)) {
        http_request req;
        req.method = "PUT";
        req.target = target;
        req.file = file_range{f.source, 0, f.size};
        req.payload_sha256 = f.sha256; // the server checks the bytes against it before storing anything
        req.headers.emplace_back("content-type", "application/octet-stream");
        auto resp = send_with_retry(conn, req);
        if (resp.status != 200)
            api_failure("uploading " + f.path, resp);
        p.bytes_done += f.size;
        return;
    }
    http_request create;
    create.method = "POST";
    create.target = target + "?uploads";
    auto created = send_with_retry(conn, create);
    if (created.status != 200)
        api_failure("starting the upload of " + f.path, created);
    pugi::xml_document doc;
    doc.load_string(created.body.c_str());
    const std::string upload_id = doc.child("InitiateMultipartUploadResult").child_value("UploadId");
    if (upload_id.empty())
        throw failure("starting the upload of " + f.path + ": no UploadId in the answer");
    const auto upload_target = target + "?uploadId=" + seg(upload_id);
    std::string complete = "<CompleteMultipartUpload>";
    try {
        int number = 1;
        for (std::uint64_t offset = 0; offset < f.size; offset += part_size, ++number) {
            http_request part;
            part.method = "PUT";
            part.target = target + "?partNumber=" + std::to_string(number) + "&uploadId=" + seg(upload_id);
            part.file = file_range{f.source, offset, std::min(part_size, f.size - offset)};
            auto resp = send_with_retry(conn, part);
            if (resp.status != 200)
                api_failure("uploading part " + std::to_string(number) + " of " + f.path, resp);
            complete += "<Part><PartNumber>" + std::to_string(number) + "</PartNumber><ETag>" +
                        xml_escape(resp.header("etag")) + "</ETag></Part>";
            p.bytes_done += part.file->length;
        }
        complete += "</CompleteMultipartUpload>";
        http_request done;
        done.method = "POST";
        done.target = upload_target;
        done.body = complete;
        auto resp = send_with_retry(conn, done);
        // CompleteMultipartUpload may answer 200 with an <Error> body.
        if (resp.status != 200 || resp.body.find("<Error>") != std::string::npos)
            api_failure("completing the upload of " + f.path, resp);
    } catch (...) {
        http_request abort;
        abort.method = "DELETE";
        abort.target = upload_target;
        try {
            conn.send(abort);
        } catch (const std::exception&) {
        }
        throw;
    }
}

int push_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    if (p.size() < 3)
        throw failure("usage: depotctl push DIR TEAM/MODEL [--label L] [--description D] ...", 2);
    const fs::path dir = p[1];
    auto ref = parse_model_ref(p[2], false);
    const bool as_json = c.has("--json");
    const bool show = show_progress(c);
    const unsigned threads = parallelism(c);
    std::uint64_t part_size = 64ull << 20;
    std::uint64_t threshold = 1ull << 30;
    try {
        if (c.has("--part-size"))
            part_size = std::stoull(c.get("--part-size")) << 20;
        if (c.has("--multipart-threshold"))
            threshold = std::stoull(c.get("--multipart-threshold")) << 20;
    } catch (const std::exception&) {
        throw failure("--part-size and --multipart-threshold take MiB", 2);
    }
    if (part_size < (5ull << 20) || part_size > (5ull << 30))
        throw failure("--part-size must be 5 to 5120 MiB", 2);
    if (c.has("--snapshot"))
        throw failure("push versions what it uploads; use `version create --snapshot` for a snapshot", 2);
    const json version_fields = version_body(c); // refuse bad flags before sending anything

    api_client api(ep);
    auto model = api.call("GET", ref.base());
    const auto bucket = str(model, "bucket");
    const auto prefix = str(model, "prefix");

    auto files = scan_directory(dir);
    {
        progress hashing;
        hashing.what = "hash";
        hashing.files_total = files.size();
        for (const auto& f : files)
            hashing.bytes_total += f.size;
        const unsigned cores = std::max(1u, std::min(threads, std::thread::hardware_concurrency()));
        for_each_parallel(files.size(), cores, hashing, show, [&](std::size_t i, unsigned) {
            files[i].sha256 = sha256_of_file(files[i].source, &hashing);
            ++hashing.files_done;
        });
    }

    // Which contents the server already has for us: those files are created from their digest.
    std::set<std::string> known;
    {
        std::vector<std::string> digests;
        for (const auto& f : files)
            digests.push_back(f.sha256);
        std::sort(digests.begin(), digests.end());
        digests.erase(std::unique(digests.begin(), digests.end()), digests.end());
        for (std::size_t i = 0; i < digests.size(); i += lookup_batch) {
            json batch = json::array();
            for (std::size_t j = i; j < std::min(digests.size(), i + lookup_batch); ++j)
                batch.push_back(digests[j]);
            auto found = api.call("POST", "/api/v1/content/lookup", json{{"sha256", batch}});
            for (const auto& f : found["found"])
                known.insert(str(f, "sha256"));
        }
    }
    // Each unknown content is uploaded once (the first file that has it); every other file is created from
    // its digest after the uploads.
    std::vector<const local_file*> uploads;
    std::vector<const local_file*> by_digest;
    {
        std::set<std::string> uploading;
        for (const auto& f : files) {
            if (known.count(f.sha256) || uploading.count(f.sha256))
                by_digest.push_back(&f);
            else {
                uploading.insert(f.sha256);
                uploads.push_back(&f);
            }
        }
    }
    progress sending;
    sending.what = "push";
    sending.files_total = files.size();
    for (const auto* f : uploads)
        sending.bytes_total += f->size;
    run_parallel(ep, uploads.size(), threads, sending, show, [&](std::size_t i, http_connection& conn) {
        upload_file(conn, bucket, prefix + uploads[i]->path, *uploads[i], part_size, threshold, sending);
        ++sending.files_done;
    });
    run_parallel(ep, by_digest.size(), threads, sending, false, [&](std::size_t i, http_connection& conn) {
        const auto& f = *by_digest[i];
        http_request req;
        req.method = "POST";
        req.target = "/api/v1/buckets/" + seg(bucket) + "/objects";
        req.body = json{{"key", prefix + f.path}, {"sha256", f.sha256}, {"size", f.size}}.dump();
        req.headers.emplace_back("content-type", "application/json");
        auto resp = send_with_retry(conn, req);
        if (resp.status / 100 != 2)
            api_failure("creating " + f.path + " from its digest", resp);
        ++sending.files_done;
    });

    // The prefix mirrors the directory: what is no longer there leaves the working area (not the versions).
    std::size_t removed = 0;
    if (!c.has("--no-delete")) {
        std::set<std::string> wanted;
        for (const auto& f : files)
            wanted.insert(prefix + f.path);
        std::vector<std::string> extra;
        for (auto& k : list_keys(api.connection(), bucket, prefix))
            if (!wanted.count(k))
                extra.push_back(std::move(k));
        for (std::size_t i = 0; i < extra.size(); i += delete_batch) {
            std::string body = "<Delete><Quiet>true</Quiet>";
            for (std::size_t j = i; j < std::min(extra.size(), i + delete_batch); ++j)
                body += "<Object><Key>" + xml_escape(extra[j]) + "</Key></Object>";
            body += "</Delete>";
            http_request req;
            req.method = "POST";
            req.target = "/" + seg(bucket) + "?delete";
            req.headers.emplace_back("content-md5", to_base64(md5(body)));
            req.body = std::move(body);
            auto resp = send_with_retry(api.connection(), req);
            if (resp.status != 200 || resp.body.find("<Error>") != std::string::npos)
                api_failure("removing files no longer in " + dir.string(), resp);
            removed += std::min(extra.size(), i + delete_batch) - i;
        }
    }

    std::uint64_t sent_bytes = 0;
    for (const auto* f : uploads)
        sent_bytes += f->size;
    json summary{
        {"team", ref.team},           {"model", ref.model},           {"files", files.size()},
        {"uploaded", uploads.size()}, {"uploaded_bytes", sent_bytes}, {"deduplicated", by_digest.size()},
        {"removed", removed}};
    if (!c.has("--no-version")) {
        auto v = api.call("POST", ref.base() + "/versions", version_fields);
        summary["version"] = v;
    }
    if (as_json) {
        print_json(summary);
        return 0;
    }
    std::cout << files.size() << " files: " << uploads.size() << " uploaded ("
              << human_bytes(double(sent_bytes)) << "), " << by_digest.size() << " already stored, "
              << removed << " removed from s3://" << bucket << "/" << prefix << "\n";
    if (summary.contains("version"))
        print_version(summary["version"]);
    return 0;
}

// ------------------------------------------------------------------------------------------------- pull

/// A manifest path as a safe relative path under the target directory.
fs::path local_path(const fs::path& dir, const std::string& path)
{
    fs::path rel(path);
    if (path.empty() || rel.is_absolute())
        throw failure("refusing the manifest path '" + path + "'");
    for (const auto& part : rel)
        if (part == ".." || part == ".")
            throw failure("refusing the manifest path '" + path + "'");
    return dir / rel;
}

int pull_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    if (p.size() < 3)
        throw failure("usage: depotctl pull TEAM/MODEL[:VERSION] DIR", 2);
    auto ref = parse_model_ref(p[1], true);
    if (ref.ref.empty())
        ref.ref = "latest";
    const fs::path dir = p[2];
    const bool as_json = c.has("--json");
    const unsigned threads = parallelism(c);
    const auto view_bucket = c.get("--models-bucket", env_or("DEPOT_MODELS_BUCKET", "models"));

    api_client api(ep);
    // The version is resolved once, and every file must come from it. An alias or a label is read through
    // its own paths (the REST files of /versions/<ref> and the model view's team/model/<ref>/...), not
    // through the number it resolved to: a key scoped to an alias may read nothing else. Each file's
    // x-depot-model-version then proves it still came from the version resolved; a ref that moves mid-pull
    // fails the pull, and running it again pulls the new version (files already there stay).
    auto v = api.call("GET", ref.base() + "/versions/" + seg(ref.ref));
    const auto number = str(v, "number");
    const bool by_number = ref.ref == number;
    const std::string via = by_number ? number : ref.ref;
    auto files = api.all(ref.base() + "/versions/" + seg(via) + "/files");
    if (!by_number && str(api.call("GET", ref.base() + "/versions/" + seg(ref.ref)), "number") != number)
        throw failure(ref.ref + " moved to another version while its files were listed; run the pull again");
    auto moved = [&](const http_response& resp) {
        return !by_number && resp.header("x-depot-model-version") != number;
    };

    struct item
    {
        std::string path;
        fs::path dest;
        std::uint64_t size;
        std::string sha256;
    };
    std::vector<item> all;
    for (const auto& f : files) {
        item it{str(f, "path"), {}, f.value("size", std::uint64_t{0}), str(f, "sha256")};
        it.dest = local_path(dir, it.path);
        all.push_back(std::move(it));
    }
    // Files already in DIR with the right content stay (a resumed pull); they are hashed in parallel.
    std::vector<char> present(all.size(), 0);
    progress checking;
    checking.what = "check";
    for_each_parallel(all.size(), std::max(1u, std::thread::hardware_concurrency()), checking, false,
                      [&](std::size_t i, unsigned) {
                          std::error_code ec;
                          present[i] = fs::is_regular_file(all[i].dest, ec) &&
                                       fs::file_size(all[i].dest, ec) == all[i].size &&
                                       sha256_of_file(all[i].dest, nullptr) == all[i].sha256;
                      });
    std::vector<item> todo;
    std::size_t unchanged = 0;
    progress getting;
    getting.what = "pull";
    getting.files_total = files.size();
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (present[i]) {
            ++unchanged;
            ++getting.files_done;
            continue;
        }
        getting.bytes_total += all[i].size;
        todo.push_back(std::move(all[i]));
    }
    run_parallel(
        ep, todo.size(), threads, getting, show_progress(c), [&](std::size_t i, http_connection& conn) {
            const auto& it = todo[i];
            fs::create_directories(it.dest.parent_path());
            auto partial = it.dest;
            partial += ".depot-partial";
            std::ofstream out;
            hasher h(digest_kind::sha256);
            std::uint64_t got = 0;
            auto restart = [&] {
                out.close();
                out.open(partial, std::ios::binary | std::ios::trunc);
                if (!out)
                    throw failure("cannot write " + partial.string());
                getting.bytes_done -= got;
                got = 0;
                h.reset();
            };
            restart();
            http_request req;
            req.target = object_target(view_bucket, ref.team + "/" + ref.model + "/" + via + "/" + it.path);
            req.sink = [&](std::string_view chunk) {
                out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
                h.update(chunk);
                got += chunk.size();
                getting.bytes_done += chunk.size();
            };
            auto resp = send_with_retry(conn, req, restart);
            out.close();
            try {
                if (resp.status != 200)
                    api_failure("downloading " + it.path, resp);
                if (moved(resp))
                    throw failure(ref.ref + " moved to version " + resp.header("x-depot-model-version") +
                                  " during the pull of version " + number + "; run the pull again");
                if (!out)
                    throw failure("cannot write " + partial.string());
                const auto digest = to_hex(h.finish());
                if (got != it.size || digest != it.sha256)
                    throw failure(it.path + ": received " + std::to_string(got) + " bytes with SHA-256 " +
                                  digest + ", the manifest says " + std::to_string(it.size) + " bytes with " +
                                  it.sha256);
            } catch (...) {
                std::error_code ignored;
                fs::remove(partial, ignored);
                throw;
            }
            fs::rename(partial, it.dest);
            ++getting.files_done;
        });

    std::uint64_t bytes = 0;
    for (const auto& it : todo)
        bytes += it.size;
    if (as_json) {
        print_json(json{{"team", ref.team},
                        {"model", ref.model},
                        {"version", v["number"]},
                        {"files", files.size()},
                        {"downloaded", todo.size()},
                        {"downloaded_bytes", bytes},
                        {"unchanged", unchanged}});
        return 0;
    }
    std::cout << "version " << number << ": " << files.size() << " files verified in " << dir.string() << " ("
              << todo.size() << " downloaded, " << human_bytes(double(bytes)) << "; " << unchanged
              << " already there)\n";
    return 0;
}

// ---------------------------------------------------------------------------------------------- webhooks

void print_webhook(const json& w)
{
    std::cout << str(w, "id") << "\t" << (w.value("enabled", false) ? "enabled" : "DISABLED") << "\t"
              << str(w, "url");
    if (w.contains("event_types") && !w["event_types"].empty()) {
        std::cout << "\tevents:";
        for (const auto& t : w["event_types"])
            std::cout << " " << t.get<std::string>();
    } else {
        std::cout << "\tevents: all";
    }
    if (!str(w, "model").empty())
        std::cout << "\tmodel " << str(w, "model");
    if (!str(w, "bucket").empty())
        std::cout << "\tbucket " << str(w, "bucket");
    if (!str(w, "disabled_reason").empty())
        std::cout << "\t(" << str(w, "disabled_reason") << ")";
    std::cout << "\n";
}

/// "a,b,c" -> ["a", "b", "c"].
json event_list(const std::string& text)
{
    json out = json::array();
    std::size_t start = 0;
    while (start <= text.size()) {
        auto comma = text.find(',', start);
        auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty())
            out.push_back(item);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return out;
}

int webhook_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    if (p.size() < 3)
        throw failure("usage: depotctl webhook create|list|show|update|enable|disable|delete|rotate|ping|"
                      "deliveries|redeliver TEAM ...",
                      2);
    api_client api(ep);
    const auto& verb = p[1];
    const std::string base = "/api/v1/teams/" + seg(p[2]) + "/webhooks";
    auto need = [&](std::size_t n, const char* what) {
        if (p.size() < n)
            throw failure(std::string("usage: depotctl webhook ") + verb + " " + what, 2);
    };
    if (verb == "list") {
        auto items = api.all(base);
        if (as_json)
            print_json(items);
        else
            for (const auto& w : items)
                print_webhook(w);
        return 0;
    }
    if (verb == "create") {
        need(4, "TEAM URL [--events T1,T2] [--model M] [--bucket B] [--description D]");
        json body{{"url", p[3]}};
        if (c.has("--events"))
            body["event_types"] = event_list(c.get("--events"));
        for (auto [flag, field] : {std::pair{"--model", "model"}, std::pair{"--bucket", "bucket"},
                                   std::pair{"--description", "description"}})
            if (c.has(flag))
                body[field] = c.get(flag);
        auto w = api.call("POST", base, body);
        if (as_json) {
            print_json(w);
        } else {
            print_webhook(w);
            std::cout << "secret: " << str(w, "secret") << "  (shown once; verify signatures with it)\n";
        }
        return 0;
    }
    need(4, "TEAM ID");
    const std::string one = base + "/" + seg(p[3]);
    json result;
    if (verb == "show") {
        result = api.call("GET", one);
    } else if (verb == "update" || verb == "enable" || verb == "disable") {
        json body = json::object();
        if (verb != "update")
            body["enabled"] = verb == "enable";
        if (c.has("--url"))
            body["url"] = c.get("--url");
        if (c.has("--events"))
            body["event_types"] = event_list(c.get("--events"));
        if (c.has("--description"))
            body["description"] = c.get("--description");
        result = api.call("PATCH", one, body);
    } else if (verb == "delete") {
        api.call("DELETE", one);
        if (!as_json)
            std::cout << "deleted webhook " << p[3] << "\n";
        return 0;
    } else if (verb == "rotate") {
        json body = json::object();
        if (c.has("--overlap")) {
            try {
                body["overlap_seconds"] = std::stol(c.get("--overlap"));
            } catch (const std::exception&) {
                throw failure("--overlap needs a number of seconds", 2);
            }
        }
        result = api.call("POST", one + "/rotate", body);
        if (!as_json) {
            print_webhook(result);
            std::cout << "secret: " << str(result, "secret") << "  (the previous one also signs until "
                      << (str(result, "previous_secret_expires_at").empty()
                              ? std::string("now: not at all")
                              : str(result, "previous_secret_expires_at"))
                      << ")\n";
            return 0;
        }
    } else if (verb == "ping") {
        result = api.call("POST", one + "/ping", json::object());
        if (!as_json) {
            std::cout << "queued " << str(result, "event_type") << " " << str(result, "event_id") << "\n";
            return 0;
        }
    } else if (verb == "deliveries" && p.size() >= 5) {
        result = api.call("GET", one + "/deliveries/" + seg(p[4]));
        if (!as_json) {
            std::cout << str(result, "id") << "\t" << str(result, "event_type") << "\t"
                      << str(result, "event_id") << "\t" << str(result, "state") << "\n";
            for (const auto& a : result["attempt_log"])
                std::cout << "  attempt " << str(a, "number") << "  " << str(a, "started_at") << "  "
                          << (str(a, "status").empty() ? std::string("-") : str(a, "status")) << "  "
                          << str(a, "latency_ms") << " ms  " << str(a, "instance") << "  " << str(a, "error")
                          << "\n";
            return 0;
        }
    } else if (verb == "deliveries") {
        auto items =
            api.all(one + "/deliveries" + (c.has("--state") ? "?state=" + seg(c.get("--state")) : ""));
        if (as_json) {
            print_json(items);
        } else {
            for (const auto& d : items)
                std::cout << str(d, "id") << "\t" << str(d, "event_type") << "\t" << str(d, "event_id")
                          << "\t" << str(d, "state") << "\t" << str(d, "attempts") << " attempts\t"
                          << str(d, "last_status") << "\t" << str(d, "last_error") << "\n";
        }
        return 0;
    } else if (verb == "redeliver") {
        need(5, "TEAM ID DELIVERY");
        result = api.call("POST", one + "/deliveries/" + seg(p[4]) + "/redeliver", json::object());
        if (!as_json) {
            std::cout << "queued delivery " << str(result, "id") << " (" << str(result, "event_type")
                      << ")\n";
            return 0;
        }
    } else {
        throw failure("unknown webhook command '" + verb + "'", 2);
    }
    if (as_json)
        print_json(result);
    else
        print_webhook(result);
    return 0;
}

// ----------------------------------------------------------------------------------------------- warm-ups

void print_warmup(const json& w)
{
    std::cout << str(w, "id") << "\t" << str(w, "state") << "\tversion " << str(w, "version");
    if (!str(w, "alias").empty())
        std::cout << " (" << str(w, "alias") << ")";
    std::cout << "\t" << str(w, "trigger") << "\t" << str(w, "percent") << " %\t" << str(w, "created_at")
              << "\n";
}

void print_warmup_progress(const json& w)
{
    print_warmup(w);
    for (const auto& p : w["progress"])
        std::cout << "  " << str(p, "instance") << "\t" << str(p, "state") << "\t" << str(p, "files_done")
                  << "/" << str(p, "files_total") << " files\t" << human_bytes(p.value("bytes_done", 0.0))
                  << " of " << human_bytes(p.value("bytes_total", 0.0)) << "\t" << str(p, "percent") << " %\t"
                  << str(p, "errors") << " errors"
                  << (str(p, "last_error").empty() ? std::string() : "\t" + str(p, "last_error")) << "\n";
}

int warmup_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    if (p.size() < 3)
        throw failure("usage: depotctl warmup start|list|show TEAM/MODEL[:VERSION] ...", 2);
    api_client api(ep);
    const auto& verb = p[1];
    json result;
    if (verb == "start") {
        auto m = parse_model_ref(p[2], true);
        if (c.has("--alias") && !m.ref.empty())
            throw failure("give either TEAM/MODEL:VERSION or --alias, not both", 2);
        json body = json::object();
        if (!m.ref.empty())
            body["version"] = m.ref;
        else
            body["alias"] = c.has("--alias") ? c.get("--alias") : std::string("latest");
        result = api.call("POST", m.base() + "/warmups", body);
        if (c.has("--wait")) {
            const std::string one = m.base() + "/warmups/" + str(result, "id");
            while (str(result, "state") == "running") {
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
                result = api.call("GET", one);
            }
        }
    } else if (verb == "list") {
        auto m = parse_model_ref(p[2], false);
        auto items = api.all(m.base() + "/warmups");
        if (as_json)
            print_json(items);
        else
            for (const auto& w : items)
                print_warmup(w);
        return 0;
    } else if (verb == "show") {
        auto m = parse_model_ref(p[2], false);
        if (p.size() < 4)
            throw failure("usage: depotctl warmup show TEAM/MODEL ID", 2);
        result = api.call("GET", m.base() + "/warmups/" + seg(p[3]));
    } else {
        throw failure("unknown warmup command '" + verb + "'", 2);
    }
    if (as_json)
        print_json(result);
    else
        print_warmup_progress(result);
    if (verb == "start" && c.has("--wait") && str(result, "state") != "completed")
        return 1;
    return 0;
}

} // namespace

bool is_remote_command(const cli& c)
{
    static const std::set<std::string> remote = {"model",   "version", "alias", "snapshot",
                                                 "webhook", "warmup",  "push",  "pull"};
    return !c.positional.empty() && remote.count(c.positional[0]) != 0;
}

int run_remote(const cli& c, const char* usage)
{
    const auto& cmd = c.positional.at(0);
    if ((cmd == "model" || cmd == "version" || cmd == "alias" || cmd == "snapshot" || cmd == "webhook" ||
         cmd == "warmup") &&
        c.positional.size() < 2)
        throw failure(std::string("missing argument\n\n") + usage, 2);
    auto ep = endpoint_of(c);
    try {
        if (cmd == "model")
            return model_command(c, ep);
        if (cmd == "version")
            return version_command(c, ep);
        if (cmd == "alias")
            return alias_command(c, ep);
        if (cmd == "snapshot")
            return snapshot_command(c, ep);
        if (cmd == "webhook")
            return webhook_command(c, ep);
        if (cmd == "warmup")
            return warmup_command(c, ep);
        if (cmd == "push")
            return push_command(c, ep);
        return pull_command(c, ep);
    } catch (const transport_error& e) {
        throw failure(e.what());
    }
}

} // namespace depot::ctl
