/// \file
/// Fuzzes POST Object's form parser and policy (src/s3/post_form.cpp, src/s3/post_policy.cpp).
///
/// Input: the first byte chooses the size of the pieces the body is fed in (1 to 64 bytes), the rest is a
/// multipart/form-data body with boundary "XyZ". Invariants: the result (parts, their names, filenames,
/// Content-Types and values, or the error) does not depend on the pieces; an error is
/// malformed_post_request; every value of a parsed form, read as a policy document, parses or is refused
/// as invalid_argument, and a parsed one checks against the form's fields without crashing.

#include "s3/post_form.hpp"

#include "check.hpp"
#include "s3/post_policy.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace depot;
using namespace depot::s3;

struct outcome
{
    std::vector<std::string> parts; ///< name, filename, Content-Type and value, joined
    std::optional<errc> failed;

    bool operator==(const outcome&) const = default;
};

outcome parse(std::string_view body, std::size_t step)
{
    form_parser p("XyZ");
    outcome out;
    std::size_t fed = 0;
    for (int guard = 0; guard < 1000000; ++guard) {
        auto ev = p.next();
        if (!ev) {
            FUZZ_CHECK(ev.error().code == errc::malformed_post_request);
            out.failed = ev.error().code;
            return out;
        }
        switch (*ev) {
        case form_parser::event::need_more:
            if (fed == body.size()) {
                p.finish();
            } else {
                const auto n = std::min(step, body.size() - fed);
                p.feed(body.substr(fed, n));
                fed += n;
            }
            break;
        case form_parser::event::part_begin:
            out.parts.push_back(p.part().name + '\0' + p.part().filename.value_or("-") + '\0' +
                                p.part().content_type + '\0');
            break;
        case form_parser::event::data:
            FUZZ_CHECK(!out.parts.empty());
            FUZZ_CHECK(!p.data().empty());
            out.parts.back().append(p.data());
            break;
        case form_parser::event::part_end:
            break;
        case form_parser::event::end:
            return out;
        }
    }
    FUZZ_CHECK(false); // the parser must make progress
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const std::size_t step = 1 + data[0] % 64;
    const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
    const auto whole = parse(body, body.size() + 1);
    const auto pieces = parse(body, step);
    FUZZ_CHECK(whole == pieces);
    if (whole.failed)
        return 0;
    std::vector<form_field> fields;
    for (const auto& part : whole.parts) {
        auto name_end = part.find('\0');
        auto value_start = part.find('\0', part.find('\0', name_end + 1) + 1) + 1;
        fields.emplace_back(part.substr(0, name_end), part.substr(value_start));
    }
    for (const auto& [name, value] : fields) {
        auto policy = parse_post_policy(value);
        if (!policy) {
            FUZZ_CHECK(policy.error().code == errc::invalid_argument);
            continue;
        }
        auto checked = check_post_policy(*policy, fields, "bucket", policy->expiration);
        if (!checked)
            FUZZ_CHECK(checked.error().code == errc::access_denied);
    }
    return 0;
}
