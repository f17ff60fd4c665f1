#include "conformance.hpp"
#include "storage/localfs/localfs_blob_store.hpp"
#include "test_util.hpp"

#include <csignal>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <thread>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;
namespace fs = std::filesystem;

namespace {

/// A localfs store in a fresh temporary directory that is removed with the store.
std::shared_ptr<blob_store> make_temp_localfs(bool fsync)
{
    auto dir = std::make_shared<temp_dir>();
    auto* store =
        make_localfs_blob_store({.root = dir->path, .blocking_threads = 3, .fsync = fsync}).release();
    return std::shared_ptr<blob_store>(store, [dir](blob_store* s) { delete s; });
}

/// Writes `content` as one blob and commits it.
asio::awaitable<blob_id> localfs_put(blob_store& store, std::string_view content)
{
    auto created = co_await store.create();
    REQUIRE(created.has_value());
    REQUIRE((co_await (*created)->write(bytes_of(content))).has_value());
    REQUIRE((co_await (*created)->commit()).has_value());
    co_return (*created)->id();
}

std::size_t count_files(const fs::path& dir)
{
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

/// Lowers RLIMIT_FSIZE for the whole process (SIGXFSZ ignored) until destroyed.
struct file_size_limit
{
    rlimit saved{};
    void (*saved_handler)(int) = nullptr;

    explicit file_size_limit(rlim_t bytes)
    {
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        saved_handler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit lowered = saved;
        lowered.rlim_cur = bytes;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &lowered) == 0);
    }
    file_size_limit(const file_size_limit&) = delete;
    file_size_limit& operator=(const file_size_limit&) = delete;
    ~file_size_limit()
    {
        ::setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, saved_handler);
    }
};

} // namespace

DEPOT_BLOB_STORE_CONFORMANCE("localfs", [] { return make_temp_localfs(true); })
DEPOT_BLOB_STORE_CONFORMANCE("localfs (fsync off)", [] { return make_temp_localfs(false); })

TEST_CASE("localfs keeps a committed blob at blobs/<id[0:2]>/<id[2:4]>/<id> with mode 0640 and no temp file")
{
    temp_dir dir;
    auto store = make_localfs_blob_store({.root = dir.path});
    auto id = run(localfs_put(*store, "on disk"));
    const auto path = dir.path / "blobs" / id.substr(0, 2) / id.substr(2, 2) / id;
    REQUIRE(fs::is_regular_file(path));
    CHECK(fs::file_size(path) == 7);
    struct stat st
    {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);
    CHECK(count_files(dir.path / "tmp") == 0);
}

TEST_CASE("localfs writes land in tmp/<id>.part until commit")
{
    temp_dir dir;
    auto store = make_localfs_blob_store({.root = dir.path});
    run([&]() -> asio::awaitable<void> {
        auto created = co_await store->create();
        REQUIRE(created.has_value());
        auto& writer = **created;
        const auto tmp = dir.path / "tmp" / (writer.id() + ".part");
        CHECK(fs::exists(tmp));
        // Large spans go straight to the file; small ones may wait in memory until commit.
        const auto big = make_content(300'000, 5);
        REQUIRE((co_await writer.write(bytes_of(big))).has_value());
        CHECK(fs::file_size(tmp) == big.size());
        REQUIRE((co_await writer.write(bytes_of("tail"))).has_value());
        REQUIRE((co_await writer.commit()).has_value());
        CHECK_FALSE(fs::exists(tmp));
        auto back = co_await read_all(*store, writer.id());
        REQUIRE(back.has_value());
        CHECK(*back == big + "tail");
    }());
}

TEST_CASE("localfs blobs survive reopening the store on the same directory")
{
    temp_dir dir;
    blob_id id;
    {
        auto store = make_localfs_blob_store({.root = dir.path});
        id = run(localfs_put(*store, "durable"));
    }
    auto store = make_localfs_blob_store({.root = dir.path});
    auto back = run(read_all(*store, id));
    REQUIRE(back.has_value());
    CHECK(*back == "durable");
    auto listed = run(store->list("", 10));
    REQUIRE(listed.has_value());
    REQUIRE(listed->size() == 1);
    CHECK((*listed)[0].id == id);
}

TEST_CASE("a localfs writer destroyed without commit removes its temporary file in the background")
{
    temp_dir dir;
    auto store = make_localfs_blob_store({.root = dir.path});
    run([&]() -> asio::awaitable<void> {
        auto created = co_await store->create();
        REQUIRE(created.has_value());
        REQUIRE((co_await (*created)->write(bytes_of(make_content(200'000, 6)))).has_value());
    }());
    for (int i = 0; i < 500 && count_files(dir.path / "tmp") > 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(count_files(dir.path / "tmp") == 0);
}

TEST_CASE("localfs remove_incomplete and list leave files they did not create alone")
{
    temp_dir dir;
    auto store = make_localfs_blob_store({.root = dir.path});
    auto id = run(localfs_put(*store, "mine"));
    const auto foreign_tmp = dir.path / "tmp" / "notes.txt";
    std::ofstream(foreign_tmp) << "not a blob";
    const timeval old_times[2] = {{1'000'000, 0}, {1'000'000, 0}};
    REQUIRE(::utimes(foreign_tmp.c_str(), old_times) == 0);
    std::ofstream(dir.path / "blobs" / id.substr(0, 2) / id.substr(2, 2) / "stray") << "x";
    fs::create_directories(dir.path / "blobs" / "zz");

    auto removed = run(store->remove_incomplete(std::chrono::system_clock::now() + std::chrono::hours(1)));
    REQUIRE(removed.has_value());
    CHECK(*removed == 0);
    CHECK(fs::exists(foreign_tmp));
    auto listed = run(store->list("", 10));
    REQUIRE(listed.has_value());
    REQUIRE(listed->size() == 1);
    CHECK((*listed)[0].id == id);
}

TEST_CASE("a localfs blob removed while being read stays readable to its reader")
{
    temp_dir dir;
    auto store = make_localfs_blob_store({.root = dir.path});
    const auto content = make_content(100'000, 7);
    run([&]() -> asio::awaitable<void> {
        auto id = co_await localfs_put(*store, content);
        auto opened = co_await store->open(id, 10, 50'000);
        REQUIRE(opened.has_value());
        REQUIRE((co_await store->remove(id)).has_value());
        std::string got(60'000, '\0');
        std::size_t filled = 0;
        for (;;) {
            auto n = co_await (*opened)->read_some(std::as_writable_bytes(std::span(got).subspan(filled)));
            REQUIRE(n.has_value());
            if (*n == 0)
                break;
            filled += *n;
        }
        got.resize(filled);
        CHECK(got == content.substr(10, 50'000));
    }());
}

TEST_CASE("localfs reports a broken directory as io_error naming the operation and the cause")
{
    temp_dir dir;
    auto store = make_localfs_blob_store({.root = dir.path});
    fs::remove_all(dir.path / "tmp");
    auto created = run(store->create());
    REQUIRE_FALSE(created.has_value());
    CHECK(created.error().code == errc::io_error);
    CHECK(created.error().message.find("create") != std::string::npos);
    CHECK(created.error().message.find("No such file or directory") != std::string::npos);
    CHECK(created.error().message.find(dir.path.string()) == std::string::npos);
}

TEST_CASE("a failed localfs write poisons the writer, and abort leaves nothing behind")
{
    temp_dir dir;
    auto store = make_localfs_blob_store({.root = dir.path});
    // A file size limit makes the kernel refuse the write (EFBIG) the way a full disk would (ENOSPC).
    std::optional<file_size_limit> limit(std::in_place, 1024 * 1024);
    run([&]() -> asio::awaitable<void> {
        auto created = co_await store->create();
        REQUIRE(created.has_value());
        auto& writer = **created;
        const auto big = make_content(2 * 1024 * 1024, 8);
        auto written = co_await writer.write(bytes_of(big));
        REQUIRE_FALSE(written.has_value());
        CHECK(written.error().code == errc::io_error);
        CHECK(written.error().message.find("write") != std::string::npos);
        CHECK(written.error().message.find(writer.id()) != std::string::npos);
        auto again = co_await writer.write(bytes_of("x"));
        CHECK_FALSE(again.has_value());
        auto committed = co_await writer.commit();
        CHECK_FALSE(committed.has_value());
        co_await writer.abort();
        auto info = co_await store->stat(writer.id());
        REQUIRE_FALSE(info.has_value());
        CHECK(info.error().code == errc::not_found);
    }());
    limit.reset();
    CHECK(count_files(dir.path / "tmp") == 0);
    auto listed = run(store->list("", 10));
    REQUIRE(listed.has_value());
    CHECK(listed->empty());
}
