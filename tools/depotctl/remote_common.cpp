// Helpers shared by depotctl's remote command families: the endpoint and credentials from flags, the
// environment and the AWS files, the REST client, model references and output.
#include "remote_common.hpp"

#include "common/hash.hpp"
#include "common/uri.hpp"

#include <fstream>
#include <iostream>
#include <map>
#include <pugixml.hpp>
#include <unistd.h>

namespace depot::ctl {

namespace fs = std::filesystem;

namespace {

/// `profile`'s settings in the AWS config file (AWS_CONFIG_FILE, default ~/.aws/config): the section is
/// [default] or [profile NAME]. Empty when the file or the section is missing.
std::map<std::string, std::string> aws_config(const std::string& profile)
{
    fs::path file = env_or("AWS_CONFIG_FILE", "");
    if (file.empty())
        file = fs::path(env_or("HOME", ".")) / ".aws" / "config";
    std::map<std::string, std::string> out;
    std::ifstream in(file);
    const std::string wanted = profile == "default" ? "default" : "profile " + profile;
    auto trim = [](std::string t) {
        const char* space = " \t\r";
        t.erase(0, t.find_first_not_of(space));
        t.erase(t.find_last_not_of(space) + 1);
        return t;
    };
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        line = trim(line);
        if (line.empty() || line[0] == '#' || line[0] == ';')
            continue;
        if (line[0] == '[') {
            inside = line.back() == ']' && trim(line.substr(1, line.size() - 2)) == wanted;
            continue;
        }
        auto eq = line.find('=');
        if (inside && eq != std::string::npos)
            out[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    }
    return out;
}

} // namespace

endpoint endpoint_of(const cli& c)
{
    endpoint ep;
    // As the AWS CLI: flag, then variable, then the profile's endpoint_url and region in ~/.aws/config.
    const auto config = aws_config(c.get("--profile", env_or("AWS_PROFILE", "default")));
    auto configured = [&](const char* key, const std::string& fallback) {
        auto it = config.find(key);
        return it == config.end() || it->second.empty() ? fallback : it->second;
    };
    try {
        parse_endpoint_url(
            c.get("--endpoint",
                  env_or("DEPOT_ENDPOINT",
                         env_or("AWS_ENDPOINT_URL", configured("endpoint_url", "http://127.0.0.1:9000")))),
            ep);
    } catch (const std::invalid_argument& e) {
        throw failure(e.what(), 2);
    }
    ep.region = c.get("--region",
                      env_or("AWS_REGION", env_or("AWS_DEFAULT_REGION", configured("region", "us-east-1"))));
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
    auto body = json_parse(resp.body);
    if (body && body->is_object()) {
        if (const auto* title = member(*body, "title"); title && title->is_string())
            message += " " + std::string(title->get_string());
        if (const auto* detail = member(*body, "detail"); detail && detail->is_string())
            message += ": " + std::string(detail->get_string());
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

const json* member(const json& o, std::string_view field) noexcept
{
    const auto* obj = o.if_object();
    return obj == nullptr ? nullptr : obj->if_contains(field);
}

const boost::json::array& items(const json& o, std::string_view field) noexcept
{
    static const boost::json::array none;
    const auto* m = member(o, field);
    return m != nullptr && m->is_array() ? m->get_array() : none;
}

bool flag(const json& o, std::string_view field) noexcept
{
    const auto* m = member(o, field);
    return m != nullptr && m->is_bool() && m->get_bool();
}

double number(const json& o, std::string_view field) noexcept
{
    const auto* m = member(o, field);
    if (m == nullptr || !m->is_number())
        return 0;
    boost::system::error_code ec;
    const auto d = m->to_number<double>(ec);
    return ec ? 0 : d;
}

std::string dump(const json& j)
{
    return boost::json::serialize(j);
}

std::string str(const json& o, const char* field)
{
    const auto* m = member(o, field);
    if (m == nullptr || m->is_null())
        return {};
    return m->is_string() ? std::string(m->get_string()) : dump(*m);
}

void print_json(const json& j)
{
    std::cout << dump(j) << "\n";
}

void print_version(const json& v)
{
    std::cout << "version " << str(v, "number");
    if (!str(v, "label").empty())
        std::cout << " (" << str(v, "label") << ")";
    std::cout << "  " << str(v, "state") << "  " << str(v, "file_count") << " files, "
              << human_bytes(number(v, "total_bytes")) << "  by " << str(v, "created_by") << " at "
              << str(v, "created_at");
    if (const auto& aliases = items(v, "aliases"); !aliases.empty()) {
        std::cout << "  aliases:";
        for (const auto& a : aliases)
            std::cout << " " << (a.is_string() ? std::string(a.get_string()) : str(a, "name"));
    }
    std::cout << "\n";
}

/// The version fields of `version create` and `push`.
json version_body(const cli& c)
{
    boost::json::object body;
    for (auto [option, field] : {std::pair{"--label", "label"}, std::pair{"--description", "description"},
                                 std::pair{"--framework", "framework"}, std::pair{"--format", "format"},
                                 std::pair{"--run-url", "run_url"}, std::pair{"--snapshot", "snapshot"}})
        if (c.has(option))
            body[field] = c.get(option);
    if (c.has("--parent")) {
        try {
            body["parent"] = std::stoi(c.get("--parent"));
        } catch (const std::exception&) {
            throw failure("--parent needs a version number", 2);
        }
    }
    for (auto [option, field] : {std::pair{"--labels", "labels"}, std::pair{"--metrics", "metrics"}}) {
        if (!c.has(option))
            continue;
        auto parsed = json_parse(c.get(option));
        if (!parsed || !parsed->is_object())
            throw failure(std::string(option) + " needs a JSON object", 2);
        body[field] = std::move(*parsed);
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

std::string object_target(const std::string& bucket, const std::string& key)
{
    return "/" + seg(bucket) + "/" + uri_encode(key, true);
}

std::vector<std::pair<std::string, std::string>> if_match_header(const cli& c)
{
    if (!c.has("--if-match"))
        return {};
    return {{"if-match", c.get("--if-match")}};
}

json comma_list(const std::string& text)
{
    boost::json::array out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto comma = text.find(',', start);
        auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty())
            out.emplace_back(item);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return out;
}

json scope_body(const cli& c)
{
    boost::json::object j;
    if (c.has("--read-only"))
        j["read_only"] = true;
    for (const char* f : {"--bucket", "--prefix", "--model", "--alias"})
        if (c.has(f))
            j[std::string(f + 2)] = c.get(f);
    return j.empty() ? json() : json(std::move(j));
}

json expires_in_body(const cli& c)
{
    auto seconds = expires_in_seconds(c);
    return seconds ? json(*seconds) : json(nullptr);
}

} // namespace depot::ctl
