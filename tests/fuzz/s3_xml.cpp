/// \file
/// Fuzzes the S3 XML request body parsers (src/s3/xml.cpp): CreateBucketConfiguration, DeleteObjects,
/// CompleteMultipartUpload, VersioningConfiguration and Tagging (object and bucket limits).
///
/// The first input byte picks the parser, the rest is the body. Invariants: DeleteObjects yields 1..1000
/// objects; CompleteMultipartUpload 1.. parts numbered strictly ascending within 1..10000; Tagging at most
/// the limit of distinct, non-empty, valid UTF-8 keys not starting with "aws:". Independently, any valid
/// UTF-8 text without NUL written by the response writer's escaping and read back as a DeleteObjects key
/// comes back unchanged (keys are echoed in listings and DeleteResult).

#include "check.hpp"
#include "s3/utf8.hpp"
#include "s3/xml.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

namespace {

using namespace depot;
using namespace depot::s3;

void check_tags(const result<std::vector<tag>>& tags, std::size_t limit)
{
    if (!tags)
        return;
    FUZZ_CHECK(tags->size() <= limit);
    std::set<std::string> keys;
    for (const auto& t : *tags) {
        FUZZ_CHECK(!t.key.empty() && !t.key.starts_with("aws:"));
        FUZZ_CHECK(is_valid_utf8(t.key) && is_valid_utf8(t.value));
        FUZZ_CHECK(keys.insert(t.key).second);
    }
}

void check_escape_round_trip(std::string_view text)
{
    if (text.empty() || !is_valid_utf8(text) || text.find('\0') != std::string_view::npos)
        return;
    xml_writer w;
    w.open("Delete", s3_xmlns).open("Object").element("Key", text);
    auto body = std::move(w).finish();
    auto parsed = parse_delete_objects(body);
    FUZZ_CHECK(parsed && parsed->objects.size() == 1);
    FUZZ_CHECK(parsed->objects[0].key == text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 7) {
    case 0:
        (void)parse_create_bucket_configuration(body);
        break;
    case 1: {
        auto r = parse_delete_objects(body);
        if (r)
            FUZZ_CHECK(!r->objects.empty() && r->objects.size() <= max_delete_objects);
        break;
    }
    case 2: {
        auto r = parse_complete_multipart_upload(body);
        if (r) {
            FUZZ_CHECK(!r->empty());
            int previous = 0;
            for (const auto& p : *r) {
                FUZZ_CHECK(p.part_number > previous && p.part_number <= 10000);
                previous = p.part_number;
            }
        }
        break;
    }
    case 3:
        (void)parse_versioning_configuration(body);
        break;
    case 4:
        check_tags(parse_tagging(body), max_object_tags);
        break;
    case 5:
        check_tags(parse_tagging(body, 50), 50);
        break;
    case 6:
        check_escape_round_trip(body);
        break;
    }
    return 0;
}
