#include "config/options.hpp"

#include "s3/acl.hpp"
#include "s3/names.hpp"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

namespace depot::config {

namespace {

struct setting
{
    std::string flag;
    std::string env;
    std::string help;
    std::function<bool(options&, const std::string&)> apply; ///< false = bad value
};

template <class T>
bool parse_number(const std::string& text, T& out)
{
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && p == text.data() + text.size();
}

bool parse_bool(const std::string& text, bool& out)
{
    if (text == "1" || text == "true" || text == "yes" || text == "on")
        out = true;
    else if (text == "0" || text == "false" || text == "no" || text == "off")
        out = false;
    else
        return false;
    return true;
}

bool parse_seconds(const std::string& text, std::chrono::seconds& out, long min)
{
    long s = 0;
    if (!parse_number(text, s) || s < min)
        return false;
    out = std::chrono::seconds(s);
    return true;
}

const std::vector<setting>& settings()
{
    static const std::vector<setting> all = {
        {"--listen", "DEPOT_LISTEN", "HOST:PORT to serve S3 and the API on (default 127.0.0.1:9000)",
         [](options& o, const std::string& v) {
             o.listen = v;
             return !v.empty();
         }},
        {"--console-listen", "DEPOT_CONSOLE_LISTEN",
         "HOST:PORT of the web console (/ui/ and the API with console sessions), an origin apart from the "
         "stored objects; off = no console; shared = on --listen (default: --listen's host, port + 1)",
         [](options& o, const std::string& v) {
             o.console_listen = v;
             if (v == "off" || v == "shared")
                 return true;
             const auto colon = v.rfind(':');
             long port = -1;
             return colon != std::string::npos && colon > 0 && parse_number(v.substr(colon + 1), port) &&
                    port >= 0 && port <= 65535;
         }},
        {"--database-url", "DEPOT_DATABASE_URL", "PostgreSQL connection URL or conninfo (required)",
         [](options& o, const std::string& v) {
             o.database_url = v;
             return !v.empty();
         }},
        {"--storage", "DEPOT_STORAGE", "blob store: localfs (default), rados or memory",
         [](options& o, const std::string& v) {
             o.storage = v;
             return v == "localfs" || v == "rados" || v == "memory";
         }},
        {"--rados-conf", "DEPOT_RADOS_CONF", "ceph.conf of the cluster (default /etc/ceph/ceph.conf)",
         [](options& o, const std::string& v) {
             o.rados_conf = v;
             return !v.empty();
         }},
        {"--rados-user", "DEPOT_RADOS_USER", "cephx client name (default client.admin)",
         [](options& o, const std::string& v) {
             o.rados_user = v;
             return !v.empty();
         }},
        {"--rados-keyring", "DEPOT_RADOS_KEYRING", "keyring file (default: the one ceph.conf names)",
         [](options& o, const std::string& v) {
             o.rados_keyring = v;
             return true;
         }},
        {"--rados-pool", "DEPOT_RADOS_POOL", "pool holding the blobs (default depot)",
         [](options& o, const std::string& v) {
             o.rados_pool = v;
             return !v.empty();
         }},
        {"--rados-namespace", "DEPOT_RADOS_NAMESPACE", "RADOS namespace inside the pool (default none)",
         [](options& o, const std::string& v) {
             o.rados_namespace = v;
             return true;
         }},
        {"--rados-stripe-size", "DEPOT_RADOS_STRIPE_SIZE",
         "bytes per RADOS object of a blob (default 4194304)",
         [](options& o, const std::string& v) {
             return parse_number(v, o.rados_stripe_size) && o.rados_stripe_size >= 65536;
         }},
        {"--rados-window", "DEPOT_RADOS_WINDOW", "stripe operations in flight per request (default 8)",
         [](options& o, const std::string& v) {
             return parse_number(v, o.rados_window) && o.rados_window > 0;
         }},
        {"--rados-write-budget", "DEPOT_RADOS_WRITE_BUDGET",
         "bytes of stripe writes in flight over all uploads together, 0 = no bound beyond each upload's "
         "window (default 67108864)",
         [](options& o, const std::string& v) { return parse_number(v, o.rados_write_budget); }},
        {"--rados-op-timeout", "DEPOT_RADOS_OP_TIMEOUT",
         "seconds a RADOS operation may take before it fails and the request answers 503 SlowDown "
         "(default 30)",
         [](options& o, const std::string& v) {
             long s = 0;
             bool okay = parse_number(v, s) && s > 0;
             o.rados_op_timeout = std::chrono::seconds(s);
             return okay;
         }},
        {"--blob-dir", "DEPOT_BLOB_DIR", "directory of the localfs blob store (default ./var/blobs)",
         [](options& o, const std::string& v) {
             o.blob_dir = v;
             return !v.empty();
         }},
        {"--server-key-file", "DEPOT_SERVER_KEY_FILE",
         "file holding the key that seals secrets at rest; created if missing (default ./var/server.key)",
         [](options& o, const std::string& v) {
             o.server_key_file = v;
             return !v.empty();
         }},
        {"--server-key", "DEPOT_SERVER_KEY", "the server key as 64 hex characters (overrides the file)",
         [](options& o, const std::string& v) {
             o.server_key_hex = v;
             return v.size() == 64;
         }},
        {"--sse-master-key-file", "DEPOT_SSE_MASTER_KEY_FILE",
         "file holding the SSE master key (64 hex characters) that SSE-S3 encryption wraps each object's "
         "data key with; without it SSE-S3 requests answer 501 NotImplemented",
         [](options& o, const std::string& v) {
             o.sse_master_key_file = v;
             return !v.empty();
         }},
        {"--sse-master-key", "DEPOT_SSE_MASTER_KEY",
         "the SSE master key as 64 hex characters (overrides --sse-master-key-file; Helm's sseMasterKey)",
         [](options& o, const std::string& v) {
             o.sse_master_key_hex = v;
             return v.size() == 64;
         }},
        {"--metrics-token-file", "DEPOT_METRICS_TOKEN_FILE",
         "file holding the bearer token GET /metrics then requires (at least 16 printable characters); "
         "without it /metrics is unauthenticated",
         [](options& o, const std::string& v) {
             o.metrics_token_file = v;
             return !v.empty();
         }},
        {"--metrics-token", "DEPOT_METRICS_TOKEN",
         "the bearer token of /metrics itself (overrides --metrics-token-file; Helm's metrics.tokenSecret)",
         [](options& o, const std::string& v) {
             o.metrics_token = v;
             return !v.empty();
         }},
        {"--sse-c-allow-http", "DEPOT_SSE_C_ALLOW_HTTP",
         "accept SSE-C (customer keys in headers) on a plain-HTTP listener: only behind a TLS-terminating "
         "proxy (default false: SSE-C needs --tls-cert)",
         [](options& o, const std::string& v) { return parse_bool(v, o.sse_c_allow_http); }},
        {"--region", "DEPOT_REGION", "region name clients sign for (default us-east-1)",
         [](options& o, const std::string& v) {
             o.region = v;
             return !v.empty();
         }},
        {"--domain", "DEPOT_DOMAIN", "base domain for virtual-hosted-style requests (BUCKET.DOMAIN)",
         [](options& o, const std::string& v) {
             o.domain = v;
             return true;
         }},
        {"--models-bucket", "DEPOT_MODELS_BUCKET",
         "bucket name of the read-only S3 view of released models (default models)",
         [](options& o, const std::string& v) {
             o.models_bucket = v;
             return static_cast<bool>(s3::validate_bucket_name(v)) && v != "api";
         }},
        {"--log-level", "DEPOT_LOG_LEVEL", "debug, info (default), warn or error",
         [](options& o, const std::string& v) {
             o.log_level = v;
             return v == "debug" || v == "info" || v == "warn" || v == "warning" || v == "error";
         }},
        {"--threads", "DEPOT_THREADS", "I/O threads (default: one per core)",
         [](options& o, const std::string& v) { return parse_number(v, o.threads); }},
        {"--db-connections", "DEPOT_DB_CONNECTIONS", "PostgreSQL pool size (default 32)",
         [](options& o, const std::string& v) {
             return parse_number(v, o.db_connections) && o.db_connections > 0;
         }},
        {"--migrate", "DEPOT_MIGRATE", "apply pending schema migrations at start: true (default) or false",
         [](options& o, const std::string& v) { return parse_bool(v, o.migrate); }},
        {"--max-clock-skew", "DEPOT_MAX_CLOCK_SKEW", "accepted client clock skew in seconds (default 900)",
         [](options& o, const std::string& v) {
             long s = 0;
             bool okay = parse_number(v, s) && s > 0;
             o.max_clock_skew = std::chrono::seconds(s);
             return okay;
         }},
        {"--lookup-cache-ttl", "DEPOT_LOOKUP_CACHE_TTL",
         "seconds an access key or bucket may be served from memory; changes arrive by NOTIFY at once, this "
         "only bounds a lost one (default 60, 0 = always ask PostgreSQL)",
         [](options& o, const std::string& v) {
             long s = 0;
             bool okay = parse_number(v, s) && s >= 0;
             o.lookup_cache_ttl = std::chrono::seconds(s);
             return okay;
         }},
        {"--multipart-max-age", "DEPOT_MULTIPART_MAX_AGE",
         "seconds after which an unfinished multipart upload is aborted (default 604800 = 7 days)",
         [](options& o, const std::string& v) {
             long s = 0;
             bool okay = parse_number(v, s) && s > 0;
             o.multipart_max_age = std::chrono::seconds(s);
             return okay;
         }},
        {"--cleanup-interval", "DEPOT_CLEANUP_INTERVAL",
         "seconds between runs of the cleanup of abandoned uploads and incomplete writes (default 3600)",
         [](options& o, const std::string& v) {
             long s = 0;
             bool okay = parse_number(v, s) && s > 0;
             o.cleanup_interval = std::chrono::seconds(s);
             return okay;
         }},
        {"--lifecycle-day-seconds", "DEPOT_LIFECYCLE_DAY_SECONDS",
         "seconds a lifecycle day lasts for bucket lifecycle rules (default 86400; a testing knob: anything "
         "else counts days from the exact start, not from midnight UTC)",
         [](options& o, const std::string& v) {
             long s = 0;
             bool okay = parse_number(v, s) && s > 0;
             o.lifecycle_day = std::chrono::seconds(s);
             return okay;
         }},
        {"--audit-retention", "DEPOT_AUDIT_RETENTION",
         "seconds audit rows stay in the database; older ones are archived to --audit-archive-bucket by the "
         "cleanup (default 0 = keep every row)",
         [](options& o, const std::string& v) { return parse_seconds(v, o.audit_retention, 0); }},
        {"--audit-archive-bucket", "DEPOT_AUDIT_ARCHIVE_BUCKET",
         "bucket the audit rows older than --audit-retention are archived to, as "
         "audit/audit-FIRST-LAST.jsonl",
         [](options& o, const std::string& v) {
             o.audit_archive_bucket = v;
             return static_cast<bool>(s3::validate_bucket_name(v));
         }},
        {"--rate-limit", "DEPOT_RATE_LIMIT",
         "requests per second each access key or API token may make; more answer 503 SlowDown "
         "(default 0 = unlimited)",
         [](options& o, const std::string& v) {
             long n = 0;
             bool okay = parse_number(v, n) && n >= 0;
             o.rate_limit = static_cast<double>(n);
             return okay;
         }},
        {"--rate-burst", "DEPOT_RATE_BURST",
         "requests a credential may make at once above its rate (default: one second's worth, at least 1)",
         [](options& o, const std::string& v) {
             long n = 0;
             bool okay = parse_number(v, n) && n > 0;
             o.rate_burst = static_cast<double>(n);
             return okay;
         }},
        {"--blob-grace", "DEPOT_BLOB_GRACE",
         "seconds a blob write may go untouched, or a committed blob stay unpublished, before the cleanup "
         "reclaims it (default 3600)",
         [](options& o, const std::string& v) {
             long s = 0;
             bool okay = parse_number(v, s) && s > 0;
             o.blob_grace = std::chrono::seconds(s);
             return okay;
         }},
        {"--public-url", "DEPOT_PUBLIC_URL",
         "base URL clients reach this installation at, for presigned links in events (default "
         "http://<listen>)",
         [](options& o, const std::string& v) {
             o.public_url = v;
             return v.starts_with("http://") || v.starts_with("https://");
         }},
        {"--webhook-allow-private", "DEPOT_WEBHOOK_ALLOW_PRIVATE",
         "allow webhook targets on loopback, private and link-local addresses (default false)",
         [](options& o, const std::string& v) { return parse_bool(v, o.webhook_allow_private); }},
        {"--allow-public-access", "DEPOT_ALLOW_PUBLIC_ACCESS",
         "allow public ACL grants (public-read, authenticated-read, ...) on buckets and objects; off, they "
         "are "
         "refused and stored ones void (default false)",
         [](options& o, const std::string& v) { return parse_bool(v, o.allow_public_access); }},
        {"--default-object-ownership", "DEPOT_DEFAULT_OBJECT_OWNERSHIP",
         "the object ownership of a bucket created without x-amz-object-ownership: BucketOwnerEnforced "
         "(ACLs disabled, AWS's default), BucketOwnerPreferred or ObjectWriter (ACLs in effect, as "
         "radosgw and MinIO buckets have them) (default BucketOwnerEnforced)",
         [](options& o, const std::string& v) {
             o.default_object_ownership = v;
             return s3::is_object_ownership(v);
         }},
        {"--webhook-allow-cidr", "DEPOT_WEBHOOK_ALLOW_CIDR",
         "comma-separated networks (10.42.0.0/16,fd00::/8) webhook targets may be in although not public",
         [](options& o, const std::string& v) {
             auto nets = parse_allowed_networks(v);
             return nets && (o.webhook_allow_cidr = std::move(*nets), true);
         }},
        {"--webhook-timeout", "DEPOT_WEBHOOK_TIMEOUT",
         "seconds one webhook delivery attempt may take (default 10)",
         [](options& o, const std::string& v) { return parse_seconds(v, o.webhook_timeout, 1); }},
        {"--webhook-retry-base", "DEPOT_WEBHOOK_RETRY_BASE",
         "seconds before the first retry of a failed delivery; doubles per attempt, +-50 % jitter (default "
         "10)",
         [](options& o, const std::string& v) { return parse_seconds(v, o.webhook_retry_base, 1); }},
        {"--webhook-retry-max", "DEPOT_WEBHOOK_RETRY_MAX",
         "longest wait between delivery retries (default 3600)",
         [](options& o, const std::string& v) { return parse_seconds(v, o.webhook_retry_max, 1); }},
        {"--webhook-max-age", "DEPOT_WEBHOOK_MAX_AGE",
         "seconds after its event a failing delivery is given up (default 259200 = 3 days)",
         [](options& o, const std::string& v) { return parse_seconds(v, o.webhook_max_age, 1); }},
        {"--webhook-failure-limit", "DEPOT_WEBHOOK_FAILURE_LIMIT",
         "failed attempts in a row after which a subscription is disabled (default 20)",
         [](options& o, const std::string& v) {
             return parse_number(v, o.webhook_failure_limit) && o.webhook_failure_limit > 0;
         }},
        {"--audit-seal-interval", "DEPOT_AUDIT_SEAL_INTERVAL",
         "milliseconds between links of newly committed audit rows into the hash chain (default 100)",
         [](options& o, const std::string& v) {
             long ms = 0;
             bool okay = parse_number(v, ms) && ms >= 1;
             o.audit_seal_interval = std::chrono::milliseconds(ms);
             return okay;
         }},
        {"--webhook-poll-interval", "DEPOT_WEBHOOK_POLL_INTERVAL",
         "milliseconds between looks for due deliveries besides NOTIFY wake-ups (default 2000)",
         [](options& o, const std::string& v) {
             long ms = 0;
             bool okay = parse_number(v, ms) && ms >= 10;
             o.webhook_poll_interval = std::chrono::milliseconds(ms);
             return okay;
         }},
        {"--webhook-concurrency", "DEPOT_WEBHOOK_CONCURRENCY", "webhook deliveries sent at once (default 8)",
         [](options& o, const std::string& v) {
             return parse_number(v, o.webhook_concurrency) && o.webhook_concurrency > 0 &&
                    o.webhook_concurrency <= 256;
         }},
        {"--event-url-expiry", "DEPOT_EVENT_URL_EXPIRY",
         "seconds the presigned file URLs in version events stay valid (default 86400, at most 604800)",
         [](options& o, const std::string& v) {
             return parse_seconds(v, o.event_url_expiry, 1) && o.event_url_expiry.count() <= 604800;
         }},
        {"--cache-memory-bytes", "DEPOT_CACHE_MEMORY_BYTES",
         "bytes of blob data the read cache keeps in memory (default 0: no memory tier)",
         [](options& o, const std::string& v) { return parse_number(v, o.cache_memory_bytes); }},
        {"--cache-dir", "DEPOT_CACHE_DIR",
         "directory of the read cache's disk tier, emptied at start (default none)",
         [](options& o, const std::string& v) {
             o.cache_dir = v;
             return true;
         }},
        {"--ui-dir", "DEPOT_UI_DIR",
         "directory to serve the web console (/ui/) from instead of the copy built into depotd; must hold "
         "index.html (default none)",
         [](options& o, const std::string& v) {
             o.ui_dir = v;
             std::error_code ec;
             return !v.empty() &&
                    std::filesystem::is_regular_file(std::filesystem::path(v) / "index.html", ec);
         }},
        {"--cache-disk-bytes", "DEPOT_CACHE_DISK_BYTES",
         "bytes the read cache keeps in --cache-dir (default 0: no disk tier)",
         [](options& o, const std::string& v) { return parse_number(v, o.cache_disk_bytes); }},
        {"--instance-id", "DEPOT_INSTANCE_ID",
         "this depotd's name for warm-up progress (default <hostname>:<pid>; a stable name resumes)",
         [](options& o, const std::string& v) {
             o.instance_id = v;
             return !v.empty() && v.size() <= 200;
         }},
        {"--warmup-concurrency", "DEPOT_WARMUP_CONCURRENCY", "files a warm-up reads at once (default 4)",
         [](options& o, const std::string& v) {
             return parse_number(v, o.warmup_concurrency) && o.warmup_concurrency > 0 &&
                    o.warmup_concurrency <= 64;
         }},
        {"--warmup-poll-interval", "DEPOT_WARMUP_POLL_INTERVAL",
         "milliseconds between polls of the warm-up jobs (it also wakes on NOTIFY; default 2000)",
         [](options& o, const std::string& v) {
             long ms = 0;
             bool okay = parse_number(v, ms) && ms >= 10;
             o.warmup_poll_interval = std::chrono::milliseconds(ms);
             return okay;
         }},
        {"--tls-cert", "DEPOT_TLS_CERT",
         "PEM certificate chain; with --tls-key the listener speaks HTTPS only (reloaded on SIGHUP)",
         [](options& o, const std::string& v) {
             o.tls_cert_file = v;
             return true;
         }},
        {"--tls-key", "DEPOT_TLS_KEY", "PEM private key of --tls-cert (reloaded on SIGHUP)",
         [](options& o, const std::string& v) {
             o.tls_key_file = v;
             return true;
         }},
        {"--max-connections", "DEPOT_MAX_CONNECTIONS",
         "open connections at most; more are accepted and closed at once (default 4096)",
         [](options& o, const std::string& v) {
             return parse_number(v, o.max_connections) && o.max_connections > 0;
         }},
        {"--max-connections-per-address", "DEPOT_MAX_CONNECTIONS_PER_ADDRESS",
         "open connections from one client address (IPv6: one /64) at most; more are closed at once "
         "(default 256, 0 = no limit; behind a proxy all clients share its address)",
         [](options& o, const std::string& v) { return parse_number(v, o.max_connections_per_address); }},
        {"--auth-failure-limit", "DEPOT_AUTH_FAILURE_LIMIT",
         "failed authentications from one client address within --auth-failure-window after which its "
         "requests answer 503 SlowDown (REST: 429) for --auth-failure-cooldown (default 20, 0 = no limit)",
         [](options& o, const std::string& v) { return parse_number(v, o.auth_failure_limit); }},
        {"--auth-failure-window", "DEPOT_AUTH_FAILURE_WINDOW",
         "seconds over which --auth-failure-limit counts failures (default 60)",
         [](options& o, const std::string& v) { return parse_seconds(v, o.auth_failure_window, 1); }},
        {"--auth-failure-cooldown", "DEPOT_AUTH_FAILURE_COOLDOWN",
         "seconds an address that reached --auth-failure-limit is refused (default 60)",
         [](options& o, const std::string& v) { return parse_seconds(v, o.auth_failure_cooldown, 1); }},
        {"--max-header-bytes", "DEPOT_MAX_HEADER_BYTES",
         "largest request line plus headers, in bytes (default 16384, at least 1024)",
         [](options& o, const std::string& v) {
             return parse_number(v, o.max_header_bytes) && o.max_header_bytes >= 1024 &&
                    o.max_header_bytes <= (64u << 20);
         }},
        {"--max-xml-body-bytes", "DEPOT_MAX_XML_BODY_BYTES",
         "largest XML request body (DeleteObjects, CompleteMultipartUpload), in bytes (default 2097152)",
         [](options& o, const std::string& v) {
             return parse_number(v, o.max_xml_body_bytes) && o.max_xml_body_bytes >= 1024;
         }},
        {"--idle-timeout", "DEPOT_IDLE_TIMEOUT", "seconds a keep-alive connection may stay idle (default 60)",
         [](options& o, const std::string& v) {
             long s = 0;
             bool okay = parse_number(v, s) && s > 0;
             o.idle_timeout = std::chrono::seconds(s);
             return okay;
         }},
        {"--shutdown-grace", "DEPOT_SHUTDOWN_GRACE",
         "seconds in-flight requests may finish after SIGTERM (default 30)",
         [](options& o, const std::string& v) {
             long s = 0;
             bool okay = parse_number(v, s) && s >= 0;
             o.shutdown_grace = std::chrono::seconds(s);
             return okay;
         }},
    };
    return all;
}

/// Reads a configuration file: one `key = value` per line, the key a flag without its dashes; blank lines
/// and lines starting with # or ; are skipped, the value is the rest of the line (trimmed, so it may hold
/// '#', as conninfo passwords do). Boost.Program_options' config parser would do this but names neither
/// the line of a bad key nor keeps a value's '#', so this reads it. Unknown keys are an error naming the
/// file, line and key: a misspelt setting must not be silently ignored.
/// Returns flag -> (value, "FILE:LINE").
result<std::map<std::string, std::pair<std::string, std::string>>> read_config_file(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        return make_error(errc::invalid_argument, "cannot read the configuration file " + path);
    std::map<std::string, std::pair<std::string, std::string>> values;
    auto trim = [](std::string t) {
        const char* space = " \t\r";
        t.erase(0, t.find_first_not_of(space));
        t.erase(t.find_last_not_of(space) + 1);
        return t;
    };
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        line = trim(line);
        if (line.empty() || line[0] == '#' || line[0] == ';')
            continue;
        const std::string line_name = path + ":" + std::to_string(number);
        const std::string where = line_name + ": ";
        auto eq = line.find('=');
        if (eq == std::string::npos)
            return make_error(errc::invalid_argument, where + "expected key = value, got '" + line + "'");
        const std::string key = trim(line.substr(0, eq));
        bool known = key != "config";
        if (known) {
            known = false;
            for (const auto& s : settings())
                known = known || s.flag == "--" + key;
        }
        if (!known)
            return make_error(errc::invalid_argument, where + "unknown key '" + key +
                                                          "' (keys are depotd's flags "
                                                          "without the dashes)");
        values["--" + key] = {trim(line.substr(eq + 1)), line_name};
    }
    return values;
}

} // namespace

std::string console_address(const options& o)
{
    if (!o.console_listen.empty())
        return o.console_listen;
    const auto colon = o.listen.rfind(':');
    long port = 0;
    if (colon == std::string::npos || !parse_number(o.listen.substr(colon + 1), port) || port < 0 ||
        port >= 65535)
        return o.listen; // refused where it is bound, with --listen's own message
    return o.listen.substr(0, colon + 1) + std::to_string(port == 0 ? 0 : port + 1);
}

std::string options_help()
{
    std::string out =
        "Usage: depotd [--config FILE] [options]\n\nEvery option can also be set by its environment variable "
        "or as a key of the configuration file (the flag without its dashes: listen = 0.0.0.0:9000); flags "
        "win "
        "over variables, variables over the file.\n\n"
        "  --config FILE             configuration file of key = value lines\n"
        "                            env: DEPOT_CONFIG\n";
    for (const auto& s : settings()) {
        out += "  " + s.flag + " VALUE";
        out += std::string(s.flag.size() < 20 ? 20 - s.flag.size() : 1, ' ');
        out += s.help + "\n" + std::string(30, ' ') + "env: " + s.env + "\n";
    }
    out += "  --version                 print depotd's version\n";
    out += "  --help                    show this text\n";
    return out;
}

result<options> parse_options(const std::vector<std::string>& args, bool& help)
{
    options o;
    help = false;
    std::map<std::string, std::string> given;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        if (a == "--help" || a == "-h") {
            help = true;
            return o;
        }
        auto eq = a.find('=');
        std::string flag = a.substr(0, eq);
        bool known = flag == "--config";
        for (const auto& s : settings())
            known = known || s.flag == flag;
        if (!known)
            return make_error(errc::invalid_argument, "unknown option " + flag + " (see --help)");
        if (eq != std::string::npos) {
            given[flag] = a.substr(eq + 1);
        } else if (i + 1 < args.size()) {
            given[flag] = args[++i];
        } else {
            return make_error(errc::invalid_argument, "option " + flag + " needs a value");
        }
    }
    std::map<std::string, std::pair<std::string, std::string>> from_file;
    std::string config = given.count("--config") ? given["--config"] : "";
    if (const char* env = std::getenv("DEPOT_CONFIG"); config.empty() && env && *env)
        config = env;
    if (!config.empty()) {
        auto read = read_config_file(config);
        if (!read)
            return std::move(read).error();
        from_file = std::move(*read);
    }
    for (const auto& s : settings()) {
        std::string value;
        std::string source;
        if (auto it = given.find(s.flag); it != given.end()) {
            value = it->second;
            source = s.flag;
        } else if (const char* env = std::getenv(s.env.c_str()); env && *env) {
            value = env;
            source = s.env;
        } else if (auto f = from_file.find(s.flag); f != from_file.end()) {
            value = f->second.first;
            source = f->second.second + ": " + s.flag.substr(2);
        } else {
            continue;
        }
        if (!s.apply(o, value))
            return make_error(errc::invalid_argument, "invalid value for " + source);
    }
    if (o.database_url.empty())
        return make_error(errc::invalid_argument,
                          "a database is required: set --database-url or DEPOT_DATABASE_URL");
    if (const auto console = console_address(o); console == o.listen && !console.ends_with(":0"))
        return make_error(errc::invalid_argument,
                          "--console-listen names --listen's address: give the console a port of its own, or "
                          "--console-listen shared to serve it on --listen");
    if (o.tls_cert_file.empty() != o.tls_key_file.empty())
        return make_error(errc::invalid_argument,
                          "TLS needs both a certificate and a key: set --tls-cert and --tls-key (or "
                          "DEPOT_TLS_CERT and DEPOT_TLS_KEY), or neither");
    if ((o.audit_retention.count() > 0) != !o.audit_archive_bucket.empty())
        return make_error(errc::invalid_argument,
                          "audit retention needs both --audit-retention and --audit-archive-bucket (or "
                          "DEPOT_AUDIT_RETENTION and DEPOT_AUDIT_ARCHIVE_BUCKET), or neither");
    if (o.cache_disk_bytes > 0 && o.cache_dir.empty())
        return make_error(errc::invalid_argument,
                          "--cache-disk-bytes needs --cache-dir (or DEPOT_CACHE_DIR)");
    return o;
}

} // namespace depot::config
