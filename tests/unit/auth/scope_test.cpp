#include "auth/scope.hpp"

#include <doctest/doctest.h>

using namespace depot::auth;

namespace {

access_scope scope_of(std::string_view json)
{
    auto s = parse_scope(json);
    REQUIRE(s);
    return *s;
}

} // namespace

TEST_CASE("an unrestricted or read-only scope confines to no bucket")
{
    CHECK_FALSE(area_of(scope_of(""), nullptr));
    CHECK_FALSE(area_of(scope_of(R"({"read_only":true})"), nullptr));
}

TEST_CASE("a bucket scope reaches its bucket, under its prefix when it has one")
{
    auto whole = area_of(scope_of(R"({"bucket":"b"})"), nullptr);
    REQUIRE(whole);
    CHECK(area_reaches(*whole, "b", "any/key"));
    CHECK(area_reaches(*whole, "b", ""));
    CHECK_FALSE(area_reaches(*whole, "b2", "any/key"));
    CHECK_FALSE(area_reaches(*whole, "", ""));

    auto under = area_of(scope_of(R"({"bucket":"b","prefix":"p/"})"), nullptr);
    REQUIRE(under);
    CHECK(area_reaches(*under, "b", "p/obj"));
    CHECK(area_reaches(*under, "b", "p/"));
    CHECK_FALSE(area_reaches(*under, "b", "p"));
    CHECK_FALSE(area_reaches(*under, "b", "q/obj"));
    CHECK_FALSE(area_reaches(*under, "b", "")); // a whole-bucket restore or listing is not under p/
    CHECK_FALSE(area_reaches(*under, "other", "p/obj"));
}

TEST_CASE("a model or alias scope reaches its model's prefix, and nothing once the model is gone")
{
    const model_location where{.model_id = 7, .bucket = "weights", .prefix = "resnet/"};
    for (auto json : {R"({"model":"vision/resnet"})", R"({"model":"vision/resnet","alias":"production"})"}) {
        auto area = area_of(scope_of(json), &where);
        REQUIRE(area);
        CHECK(area_reaches(*area, "weights", "resnet/w.bin"));
        CHECK_FALSE(area_reaches(*area, "weights", "bert/w.bin"));
        CHECK_FALSE(area_reaches(*area, "other", "resnet/w.bin"));
        auto gone = area_of(scope_of(json), nullptr);
        REQUIRE(gone);
        CHECK_FALSE(area_reaches(*gone, "weights", "resnet/w.bin"));
        CHECK_FALSE(area_reaches(*gone, "", ""));
    }
}

TEST_CASE("an alias scope reads frozen files with GET and HEAD of no particular version only")
{
    CHECK(alias_reads_frozen_file("GetObject", false));
    CHECK(alias_reads_frozen_file("HeadObject", false));
    CHECK_FALSE(alias_reads_frozen_file("GetObject", true));
    CHECK_FALSE(alias_reads_frozen_file("HeadObject", true));
    for (auto op : {"GetObjectAcl", "GetObjectAttributes", "ListParts", "ListObjectsV2", "ListObjectVersions",
                    "PutObject", "CopyObject", "UploadPartCopy"})
        CHECK_FALSE(alias_reads_frozen_file(op, false));
}
