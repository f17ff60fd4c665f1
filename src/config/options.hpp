#pragma once
/// \file
/// depotd settings: command-line flags win over DEPOT_* environment variables, which win over the
/// configuration file (--config / DEPOT_CONFIG: `key = value` lines, the keys being the flags without their
/// dashes; see read_config_file in options.cpp), which wins over defaults.

#include "common/networks.hpp"
#include "common/result.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace depot::config {

struct options
{
    std::string listen = "127.0.0.1:9000";
    /// The web console's own listener (server/console.hpp): its pages and the REST API with the session
    /// cookie, on an origin of their own so that nothing users store runs beside them. HOST:PORT; empty (the
    /// default) = --listen's host with its port + 1 (127.0.0.1:9001 beside 127.0.0.1:9000; port 0 stays 0,
    /// any free port); "off" = no console and no sessions; "shared" = the console on --listen itself (stored
    /// objects then share its origin: only their sandbox CSP keeps their scripts away from its sessions).
    std::string console_listen;
    std::string database_url;
    std::string storage = "localfs"; ///< localfs | rados | memory
    std::string blob_dir = "./var/blobs";
    /// RADOS store (--storage rados): ceph.conf, client name, keyring, pool, namespace, stripe size and the
    /// number of stripe operations kept in flight per request.
    std::string rados_conf = "/etc/ceph/ceph.conf";
    std::string rados_user = "client.admin";
    std::string rados_keyring;
    std::string rados_pool = "depot";
    std::string rados_namespace;
    std::uint64_t rados_stripe_size = 4 << 20;
    unsigned rados_window = 8;
    std::uint64_t rados_write_budget = 64 << 20;
    std::chrono::seconds rados_op_timeout{30};
    std::string server_key_file = "./var/server.key";
    std::string server_key_hex; ///< DEPOT_SERVER_KEY; overrides the file when set
    /// Server-side encryption: the file holding the SSE master key (64 hex characters) that SSE-S3 data
    /// keys are wrapped with; empty = none (SSE-S3 requests answer 501 NotImplemented). Never created.
    std::string sse_master_key_file;
    std::string sse_master_key_hex; ///< DEPOT_SSE_MASTER_KEY; overrides the file when set
    /// SSE-C sends keys in headers: refused unless the listener speaks TLS, or this is set because a
    /// TLS-terminating proxy in front of depotd does (AWS refuses SSE-C over plain HTTP).
    bool sse_c_allow_http = false;
    /// The file holding the bearer token GET /metrics requires (server/metrics_endpoint.hpp); empty =
    /// /metrics is unauthenticated, like /healthz.
    std::string metrics_token_file;
    std::string metrics_token; ///< DEPOT_METRICS_TOKEN; overrides the file when set
    std::string region = "us-east-1";
    std::string domain; ///< virtual-hosted-style base domain, e.g. "s3.example.com"
    /// The read-only S3 view of the model registry: s3://<models_bucket>/<team>/<model>/<version>/<path>.
    std::string models_bucket = "models";
    std::string log_level = "info";
    unsigned threads = 0; ///< 0 = hardware concurrency
    std::size_t db_connections = 32;
    bool migrate = true;
    /// TLS: with both files set the listener speaks HTTPS only (PEM certificate chain and private key,
    /// reloaded on SIGHUP).
    std::string tls_cert_file;
    std::string tls_key_file;
    /// Open connections beyond this are accepted and closed at once (clients retry a closed connection).
    std::size_t max_connections = 4096;
    /// Open connections from one client address (IPv6: one /64) at most, so one client cannot take every
    /// --max-connections slot; more are closed at once like those beyond max_connections. 0 = no limit.
    std::size_t max_connections_per_address = 256;
    /// Failed authentications from one client address (IPv6: one /64) within auth_failure_window after
    /// which its requests are refused for auth_failure_cooldown (503 SlowDown / 429), before any signature
    /// check or database query. 0 = no limit. Loopback is not exempt.
    unsigned auth_failure_limit = 20;
    std::chrono::seconds auth_failure_window{60};
    std::chrono::seconds auth_failure_cooldown{60};
    /// Request line plus header fields; larger ones answer 400 RequestHeaderSectionTooLarge and close.
    std::uint64_t max_header_bytes = 16 * 1024;
    /// XML request bodies (DeleteObjects, CompleteMultipartUpload, CreateBucket); larger ones answer 400
    /// MaxMessageLengthExceeded.
    std::uint64_t max_xml_body_bytes = 2 * 1024 * 1024;
    std::chrono::seconds idle_timeout{60};
    std::chrono::seconds io_timeout{120};
    std::chrono::seconds shutdown_grace{30};
    std::chrono::seconds max_clock_skew{15 * 60};
    /// Longest an access key or bucket is served from memory (registry/service/lookup_cache.hpp); 0 = no
    /// cache. Changes reach the cache through NOTIFY long before; this bounds the damage of a lost notice.
    std::chrono::seconds lookup_cache_ttl{60};
    /// Multipart uploads older than this are aborted by the cleanup task (S3 lifecycle's usual default).
    std::chrono::seconds multipart_max_age{7 * 24 * 3600};
    /// How often the cleanup task runs (abandoned uploads, incomplete blob writes).
    std::chrono::seconds cleanup_interval{3600};
    /// How long a "day" of bucket lifecycle rules lasts (registry/service/lifecycle.hpp): 86400 counts days
    /// as S3 does (due at midnight UTC); a few seconds make rules testable, like radosgw's
    /// rgw_lc_debug_interval.
    std::chrono::seconds lifecycle_day{86400};
    /// Grace age of the blob collector: incomplete writes untouched this long, and committed blobs that no
    /// metadata names this long after their commit, are reclaimed. Must exceed the longest pause of a
    /// live upload (uploads stream continuously) and of a publish after its blob committed (milliseconds).
    std::chrono::seconds blob_grace{3600};
    /// How often the audit sealer links newly committed audit rows into the hash chain.
    std::chrono::milliseconds audit_seal_interval{100};
    /// Audit retention (registry/service/audit_archive.hpp): with both set, each cleanup pass moves the audit
    /// rows older than audit_retention into audit_archive_bucket as JSON Lines and removes them from the
    /// table, one depotd of the installation at a time. 0 / empty (the default) keep every row.
    std::chrono::seconds audit_retention{0};
    std::string audit_archive_bucket;
    /// Requests per second per credential (0 = unlimited) and the burst above it (0 = one second's worth).
    double rate_limit = 0;
    double rate_burst = 0;
    /// Events and webhooks (src/server/webhooks). The base URL presigned links in event payloads point at
    /// (how clients reach this installation); empty = http://<--listen>.
    std::string public_url;
    /// Webhook targets on loopback, private, link-local or unique-local addresses are refused unless this
    /// is set (an installation whose receivers live on its own network, and tests).
    bool webhook_allow_private = false;
    /// Public ACL grants (AllUsers, AuthenticatedUsers: canned public-read, public-read-write,
    /// authenticated-read) are refused and, if stored, void unless this is set: the installation-wide
    /// PublicAccessBlock of a store that defaults to private.
    bool allow_public_access = false;
    /// The object ownership of buckets created without x-amz-object-ownership (s3::is_object_ownership).
    std::string default_object_ownership = "BucketOwnerEnforced";
    /// Networks (CIDR) webhook targets may resolve into although they are not public, e.g. the cluster's.
    allowed_networks webhook_allow_cidr;
    /// One delivery attempt: connect, send and read the answer within this.
    std::chrono::seconds webhook_timeout{10};
    /// Retries wait base * 2^(attempt-1) (at most webhook_retry_max), with +-50 % jitter; an event older
    /// than webhook_max_age is not retried any more (its delivery fails).
    std::chrono::seconds webhook_retry_base{10};
    std::chrono::seconds webhook_retry_max{3600};
    std::chrono::seconds webhook_max_age{3 * 24 * 3600};
    /// A subscription is disabled after this many failed attempts in a row (and its team admins told).
    unsigned webhook_failure_limit = 20;
    /// The dispatcher wakes on NOTIFY; it also polls this often (retries come due, missed notifications).
    std::chrono::milliseconds webhook_poll_interval{2000};
    /// Deliveries sent at once by one depotd.
    unsigned webhook_concurrency = 8;
    /// Lifetime of the presigned GET URLs in version event payloads.
    std::chrono::seconds event_url_expiry{24 * 3600};
    /// Read cache in front of the blob store (storage/cache): bytes kept in memory, and a local directory
    /// with the bytes it may hold. No cache at all when both byte counts are 0 (the default).
    std::uint64_t cache_memory_bytes = 0;
    std::string cache_dir;
    /// The web console's files (server/console.hpp) from this directory instead of the embedded copy; empty =
    /// embedded.
    std::string ui_dir;
    std::uint64_t cache_disk_bytes = 0;
    /// This depotd's name among the instances sharing the database (warm-up progress is per instance);
    /// empty = <hostname>:<pid>. Stable names (a pod name) let a restarted instance resume its warm-ups.
    std::string instance_id;
    /// Warm-up worker (server/warmup): files read at once, and how often it polls the jobs table and
    /// renews its liveness row (it also wakes on NOTIFY).
    unsigned warmup_concurrency = 4;
    std::chrono::milliseconds warmup_poll_interval{2000};
};

/// Where the console listens: HOST:PORT (console_listen, or derived from listen as described there), or
/// "off" / "shared".
std::string console_address(const options& o);

/// The text `depotd --help` prints.
std::string options_help();

/// Parses argv, the environment, then the configuration file. Returns invalid_argument with a message naming
/// the flag (for the file: its path, line and key) on bad input.
/// `help` is set when --help was given.
result<options> parse_options(const std::vector<std::string>& args, bool& help);

} // namespace depot::config
