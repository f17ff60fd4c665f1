// depotctl pull: download a model version through the read-only model view, SHA-256 verified.
#include "common/hash.hpp"
#include "remote_common.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

namespace depot::ctl {

namespace fs = std::filesystem;
namespace {

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

} // namespace

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
        item it{str(f, "path"), {}, static_cast<std::uint64_t>(ctl::number(f, "size")), str(f, "sha256")};
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
        print_json(
            boost::json::object{{"team", ref.team},
                                {"model", ref.model},
                                {"version", member(v, "number") != nullptr ? *member(v, "number") : json()},
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

} // namespace depot::ctl
