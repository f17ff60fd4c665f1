// depotctl push: upload a directory to a model's prefix over S3 (contents the server has are not sent again),
// then create a version.
#include "common/hash.hpp"
#include "common/uri.hpp"
#include "remote_common.hpp"
#include "s3/xml.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <pugixml.hpp>
#include <set>
#include <thread>

namespace depot::ctl {

namespace fs = std::filesystem;
namespace {

constexpr std::size_t lookup_batch = 1000; // the server's limit per content lookup
constexpr std::size_t delete_batch = 1000; // and per DeleteObjects
constexpr std::uint64_t max_single_put = 5ull << 30;

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
                        s3::xml_escape(resp.header("etag")) + "</ETag></Part>";
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

} // namespace

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
            boost::json::array batch;
            for (std::size_t j = i; j < std::min(digests.size(), i + lookup_batch); ++j)
                batch.emplace_back(digests[j]);
            auto found = api.call("POST", "/api/v1/content/lookup", boost::json::object{{"sha256", batch}});
            for (const auto& f : items(found, "found"))
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
        req.body =
            dump(boost::json::object{{"key", prefix + f.path}, {"sha256", f.sha256}, {"size", f.size}});
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
                body += "<Object><Key>" + s3::xml_escape(extra[j]) + "</Key></Object>";
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
    boost::json::object summary{
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
    if (const auto* v = summary.if_contains("version"))
        print_version(*v);
    return 0;
}

} // namespace depot::ctl
