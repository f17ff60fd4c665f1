#include "common/checksum.hpp"
#include "common/crc.hpp"
#include "common/hash.hpp"

#include <doctest/doctest.h>
#include <random>
#include <string>
#include <vector>

using namespace depot;

namespace {

constexpr checksum_algorithm all_algorithms[] = {checksum_algorithm::crc32, checksum_algorithm::crc32c,
                                                 checksum_algorithm::crc64nvme, checksum_algorithm::sha1,
                                                 checksum_algorithm::sha256};
constexpr checksum_algorithm crc_algorithms[] = {checksum_algorithm::crc32, checksum_algorithm::crc32c,
                                                 checksum_algorithm::crc64nvme};

std::string random_string(std::size_t n, std::mt19937_64& rng)
{
    std::string s(n, '\0');
    for (auto& c : s)
        c = static_cast<char>(rng());
    return s;
}

std::uint64_t crc_of(checksum_algorithm algorithm, std::string_view data, std::uint64_t crc = 0)
{
    switch (algorithm) {
    case checksum_algorithm::crc32:
        return crc32(data, static_cast<std::uint32_t>(crc));
    case checksum_algorithm::crc32c:
        return crc32c(data, static_cast<std::uint32_t>(crc));
    default:
        return crc64nvme(data, crc);
    }
}

std::span<const std::byte> bytes_of(std::string_view s)
{
    return std::as_bytes(std::span(s.data(), s.size()));
}

} // namespace

// ---- the CRCs ----

TEST_CASE("each CRC matches its published check value for \"123456789\"")
{
    CHECK(crc32("123456789") == 0xCBF43926u);
    CHECK(crc32c("123456789") == 0xE3069283u);
    CHECK(crc64nvme("123456789") == 0xAE8B14860A799888u);
    CHECK(to_hex(compute_checksum(checksum_algorithm::crc32, "123456789")) == "cbf43926");
    CHECK(to_hex(compute_checksum(checksum_algorithm::crc64nvme, "123456789")) == "ae8b14860a799888");
}

TEST_CASE("crc32c matches the iSCSI test vectors of RFC 3720")
{
    std::string zeros(32, '\0');
    std::string ones(32, '\xff');
    std::string ascending(32, '\0');
    std::string descending(32, '\0');
    for (int i = 0; i < 32; ++i) {
        ascending[static_cast<std::size_t>(i)] = static_cast<char>(i);
        descending[static_cast<std::size_t>(i)] = static_cast<char>(31 - i);
    }
    CHECK(crc32c(zeros) == 0x8A9136AAu);
    CHECK(crc32c(ones) == 0x62A8AB43u);
    CHECK(crc32c(ascending) == 0x46DD794Eu);
    CHECK(crc32c(descending) == 0x113FDB5Cu);
}

TEST_CASE("crc64nvme matches the 4 KiB test vectors of the NVMe command set specification")
{
    std::string zeros(4096, '\0');
    std::string ones(4096, '\xff');
    std::string ascending(4096, '\0');
    std::string descending(4096, '\0');
    for (std::size_t i = 0; i < 4096; ++i) {
        ascending[i] = static_cast<char>(i & 0xff);
        descending[i] = static_cast<char>(0xff - (i & 0xff));
    }
    CHECK(crc64nvme(zeros) == 0x6482D367EB22B64Eu);
    CHECK(crc64nvme(ones) == 0xC0DDBA7302ECA3ACu);
    CHECK(crc64nvme(ascending) == 0x3E729F5F6750449Cu);
    CHECK(crc64nvme(descending) == 0x9A2DF64B8E9E517Eu);
}

TEST_CASE("crc32c of AWS's chunked upload example (66560 bytes of 'a') is the documented trailer value")
{
    // "Signature calculations for trailing headers (chunked uploads)": x-amz-checksum-crc32c:sOO8/Q==
    CHECK(encode_checksum(compute_checksum(checksum_algorithm::crc32c, std::string(66560, 'a'))) ==
          "sOO8/Q==");
}

TEST_CASE("the checksum of no data is zero for the CRCs and the published digest for SHA")
{
    CHECK(crc32("") == 0u);
    CHECK(crc32c("") == 0u);
    CHECK(crc64nvme("") == 0u);
    CHECK(compute_checksum(checksum_algorithm::crc32, "") == std::string(4, '\0'));
    CHECK(compute_checksum(checksum_algorithm::crc64nvme, "") == std::string(8, '\0'));
    CHECK(to_hex(compute_checksum(checksum_algorithm::sha1, "")) ==
          "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    CHECK(encode_checksum(compute_checksum(checksum_algorithm::sha256, "")) ==
          "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
}

TEST_CASE("every CRC implementation this CPU has agrees with the portable one for every length up to 2 KiB")
{
    std::mt19937_64 rng(42);
    std::string data = random_string(2048 + 64, rng);
    int tested = 0;
    for (auto path : {crc_detail::crc_path::pclmul, crc_detail::crc_path::vpclmul}) {
        if (!crc_detail::available(path)) {
            MESSAGE("CRC path ", static_cast<int>(path), " is not available on this CPU");
            continue;
        }
        ++tested;
        for (auto kind :
             {crc_detail::crc_kind::crc32, crc_detail::crc_kind::crc32c, crc_detail::crc_kind::crc64nvme}) {
            std::uint64_t mask = kind == crc_detail::crc_kind::crc64nvme ? ~std::uint64_t{0} : 0xffffffffu;
            for (std::size_t offset : {0, 1, 7}) {
                for (std::size_t n = 0; n <= 2048; ++n) {
                    auto span = bytes_of(std::string_view(data).substr(offset, n));
                    std::uint64_t seed = rng() & mask;
                    INFO("path ", static_cast<int>(path), " kind ", static_cast<int>(kind), " offset ",
                         offset, " length ", n);
                    REQUIRE(crc_detail::compute(path, kind, span, seed) ==
                            crc_detail::portable(kind, span, seed));
                }
            }
        }
    }
    if (tested == 0)
        MESSAGE("no carry-less multiplication on this CPU; only the portable path is in use");
}

TEST_CASE("incremental checksums equal one-shot checksums at every split point of a 1 KiB buffer")
{
    std::mt19937_64 rng(7);
    std::string data = random_string(1024, rng);
    for (auto algorithm : all_algorithms) {
        INFO(to_string(algorithm));
        std::string whole = compute_checksum(algorithm, data);
        REQUIRE(whole.size() == checksum_size(algorithm));
        checksummer c(algorithm);
        for (std::size_t split = 0; split <= data.size(); ++split) {
            c.update(std::string_view(data).substr(0, split));
            c.update(std::string_view(data).substr(split));
            CHECK(c.size() == data.size());
            REQUIRE(c.finish() == whole);
        }
    }
}

TEST_CASE("a checksummer restarts after finish and after reset")
{
    checksummer c(checksum_algorithm::crc64nvme);
    c.update("garbage");
    c.reset();
    CHECK(c.size() == 0);
    c.update("123456789");
    CHECK(to_hex(c.finish()) == "ae8b14860a799888");
    CHECK(c.size() == 0);
    c.update("123456789");
    CHECK(to_hex(c.finish()) == "ae8b14860a799888");

    checksummer sha(checksum_algorithm::sha256);
    sha.update("abc");
    CHECK(to_hex(sha.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    checksummer moved = std::move(sha);
    moved.update("abc");
    CHECK(moved.finish() == depot::sha256("abc"));
}

TEST_CASE("combining two CRCs gives the CRC of the concatenation, including empty parts")
{
    std::mt19937_64 rng(1234);
    std::string data = random_string(20000, rng);
    for (auto algorithm : crc_algorithms) {
        INFO(to_string(algorithm));
        for (int round = 0; round < 300; ++round) {
            std::size_t a_len = round == 0 ? 0 : rng() % data.size();
            std::size_t b_len = round == 1 ? 0 : rng() % (data.size() - a_len + 1);
            std::string_view a = std::string_view(data).substr(0, a_len);
            std::string_view b = std::string_view(data).substr(a_len, b_len);
            std::uint64_t combined =
                crc_combine(algorithm, crc_of(algorithm, a), crc_of(algorithm, b), b.size());
            REQUIRE(combined == crc_of(algorithm, data.substr(0, a_len + b_len)));
        }
        CHECK(crc_combine(algorithm, 0, 0, 0) == 0);
        CHECK(crc_combine(algorithm, crc_of(algorithm, "1234"), crc_of(algorithm, "56789"), 5) ==
              crc_of(algorithm, "123456789"));
    }
}

TEST_CASE("combining handles a second part longer than 4 GiB")
{
    // Streams 2^32 + 4099 bytes (a 1 MiB random block repeated, then a tail), tracking crc(B) and crc(A||B)
    // side by side, and compares the latter with the combination. Only CRC-64/NVME, to keep the test at about
    // two seconds under the sanitizers: the 32-bit CRCs share the code, and the associativity test below
    // covers their long lengths.
    std::mt19937_64 rng(99);
    std::string block = random_string(std::size_t{1} << 20, rng);
    std::string a = random_string(1000, rng);
    constexpr std::uint64_t b_len = (std::uint64_t{1} << 32) + 4099;
    std::uint64_t crc_a = crc64nvme(a);
    std::uint64_t crc_b = 0;
    std::uint64_t crc_ab = crc_a;
    for (std::uint64_t done = 0; done < b_len;) {
        auto n = static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), b_len - done));
        std::string_view chunk = std::string_view(block).substr(0, n);
        crc_b = crc64nvme(chunk, crc_b);
        crc_ab = crc64nvme(chunk, crc_ab);
        done += n;
    }
    CHECK(crc_combine(checksum_algorithm::crc64nvme, crc_a, crc_b, b_len) == crc_ab);
}

TEST_CASE("combination is associative for lengths far beyond 2^32")
{
    std::mt19937_64 rng(5);
    for (auto algorithm : crc_algorithms) {
        for (int round = 0; round < 50; ++round) {
            std::uint64_t a = rng(), b = rng(), c = rng();
            if (algorithm != checksum_algorithm::crc64nvme) {
                a &= 0xffffffffu;
                b &= 0xffffffffu;
                c &= 0xffffffffu;
            }
            std::uint64_t b_len = rng() >> 2;
            std::uint64_t c_len = rng() >> 2;
            CHECK(crc_combine(algorithm, crc_combine(algorithm, a, b, b_len), c, c_len) ==
                  crc_combine(algorithm, a, crc_combine(algorithm, b, c, c_len), b_len + c_len));
        }
    }
}

TEST_CASE("combining is only defined for the CRCs")
{
    CHECK_THROWS_AS(crc_combine(checksum_algorithm::sha256, 0, 0, 0), std::invalid_argument);
    CHECK_THROWS_AS(crc_to_raw(checksum_algorithm::sha1, 0), std::invalid_argument);
    CHECK_THROWS_AS(crc_from_raw(checksum_algorithm::crc32, "12345"), std::invalid_argument);
}

TEST_CASE("raw CRC values are big-endian")
{
    CHECK(crc_to_raw(checksum_algorithm::crc32, 0xCBF43926u) == std::string("\xcb\xf4\x39\x26", 4));
    CHECK(encode_checksum(crc_to_raw(checksum_algorithm::crc32, 0xCBF43926u)) == "y/Q5Jg==");
    CHECK(crc_from_raw(checksum_algorithm::crc64nvme, from_hex("ae8b14860a799888").value()) ==
          0xAE8B14860A799888u);
    CHECK(crc_from_raw(checksum_algorithm::crc32c, crc_to_raw(checksum_algorithm::crc32c, 0xE3069283u)) ==
          0xE3069283u);
}

// ---- names ----

TEST_CASE("algorithm names, header names and XML elements round-trip")
{
    for (auto algorithm : all_algorithms) {
        CHECK(parse_checksum_algorithm(to_string(algorithm)) == algorithm);
        CHECK(checksum_algorithm_from_header(checksum_header_name(algorithm)) == algorithm);
        CHECK(checksum_header_name(algorithm) == "x-amz-checksum-" + std::string(header_suffix(algorithm)));
        CHECK(checksum_xml_element(algorithm) == "Checksum" + std::string(to_string(algorithm)));
    }
    CHECK(to_string(checksum_algorithm::crc64nvme) == "CRC64NVME");
    CHECK(header_suffix(checksum_algorithm::crc32c) == "crc32c");
    CHECK(checksum_size(checksum_algorithm::crc32) == 4);
    CHECK(checksum_size(checksum_algorithm::crc64nvme) == 8);
    CHECK(checksum_size(checksum_algorithm::sha1) == 20);
    CHECK(checksum_size(checksum_algorithm::sha256) == 32);
}

TEST_CASE("algorithm and header names parse without regard to case and reject everything else")
{
    CHECK(parse_checksum_algorithm("crc32") == checksum_algorithm::crc32);
    CHECK(parse_checksum_algorithm("Sha256") == checksum_algorithm::sha256);
    CHECK_FALSE(parse_checksum_algorithm("").has_value());
    CHECK_FALSE(parse_checksum_algorithm("MD5").has_value());
    CHECK_FALSE(parse_checksum_algorithm("CRC32 ").has_value());
    CHECK(checksum_algorithm_from_header("X-Amz-Checksum-CRC32C") == checksum_algorithm::crc32c);
    CHECK_FALSE(checksum_algorithm_from_header("x-amz-checksum-mode").has_value());
    CHECK_FALSE(checksum_algorithm_from_header("x-amz-checksum-type").has_value());
    CHECK_FALSE(checksum_algorithm_from_header("x-amz-checksum-algorithm").has_value());
    CHECK_FALSE(checksum_algorithm_from_header("x-amz-checksum-crc").has_value());
}

TEST_CASE("checksum types follow S3's table of which algorithm allows which type")
{
    CHECK(parse_checksum_type("FULL_OBJECT") == checksum_type::full_object);
    CHECK(parse_checksum_type("composite") == checksum_type::composite);
    CHECK_FALSE(parse_checksum_type("FULL").has_value());
    CHECK(to_string(checksum_type::full_object) == "FULL_OBJECT");
    CHECK(to_string(checksum_type::composite) == "COMPOSITE");

    CHECK(multipart_supports(checksum_algorithm::crc64nvme, checksum_type::full_object));
    CHECK_FALSE(multipart_supports(checksum_algorithm::crc64nvme, checksum_type::composite));
    CHECK(multipart_supports(checksum_algorithm::crc32, checksum_type::full_object));
    CHECK(multipart_supports(checksum_algorithm::crc32c, checksum_type::composite));
    CHECK(multipart_supports(checksum_algorithm::sha1, checksum_type::composite));
    CHECK_FALSE(multipart_supports(checksum_algorithm::sha256, checksum_type::full_object));

    CHECK(default_multipart_checksum_type(checksum_algorithm::crc64nvme) == checksum_type::full_object);
    CHECK(default_multipart_checksum_type(checksum_algorithm::crc32) == checksum_type::composite);
    CHECK(default_multipart_checksum_type(checksum_algorithm::sha256) == checksum_type::composite);
    for (auto algorithm : all_algorithms)
        CHECK(multipart_supports(algorithm, default_multipart_checksum_type(algorithm)));
}

// ---- wire values ----

TEST_CASE("a well-formed client value decodes to the raw checksum")
{
    for (auto algorithm : all_algorithms) {
        std::string raw = compute_checksum(algorithm, "hello");
        auto decoded = decode_checksum(algorithm, encode_checksum(raw));
        REQUIRE(decoded.has_value());
        CHECK(*decoded == raw);
        CHECK(verify_checksum(algorithm, encode_checksum(raw), raw).has_value());
    }
    // zlib.crc32(b"hello\n") == 0x363A3020
    CHECK(verify_checksum(checksum_algorithm::crc32,
                          "NjowIA==", crc_to_raw(checksum_algorithm::crc32, crc32("hello\n")))
              .has_value());
}

TEST_CASE("malformed client values are invalid arguments naming the header")
{
    const char* malformed[] = {
        "",             // empty
        "AAAA",         // 3 bytes
        "AAAAAA=",      // bad padding
        "AAAAAAA=",     // 5 bytes
        "AAAAAA==-2",   // a composite value where a plain one is expected
        "AA AAA==",     // a space
        "AAAAAA!=",     // not base64
        "AAAAAAAAAAA=", // 8 bytes
    };
    for (const char* value : malformed) {
        INFO(value);
        auto decoded = decode_checksum(checksum_algorithm::crc32, value);
        REQUIRE_FALSE(decoded.has_value());
        CHECK(decoded.error().code == errc::invalid_argument);
        CHECK(decoded.error().argument == "x-amz-checksum-crc32");
        CHECK(decoded.error().message == "Value for x-amz-checksum-crc32 header is invalid.");
    }
    // A value of the right form for one algorithm is malformed for another.
    CHECK_FALSE(decode_checksum(checksum_algorithm::crc64nvme, "AAAAAA==").has_value());
    CHECK(decode_checksum(checksum_algorithm::crc64nvme, "AAAAAAAAAAA=").has_value());
    auto r = verify_checksum(checksum_algorithm::sha256, "AAAAAA==", depot::sha256(""));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_argument);
    CHECK(r.error().argument == "x-amz-checksum-sha256");
}

TEST_CASE("a well-formed value that differs from the data is a bad digest")
{
    std::string raw = compute_checksum(checksum_algorithm::crc32, "hello");
    auto r = verify_checksum(checksum_algorithm::crc32, "AAAAAA==", raw);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::bad_digest);
    CHECK(r.error().message == "The CRC32 you specified did not match the calculated checksum.");
}

// ---- multipart ----

TEST_CASE("a composite checksum is the checksum of the concatenated raw part checksums with a part count")
{
    std::vector<std::string> parts = {std::string(5000, 'x'), "second part", std::string(70000, '\x01')};

    std::vector<std::string> sha_parts;
    std::string sha_concatenated;
    for (const auto& p : parts) {
        sha_parts.push_back(depot::sha256(p));
        sha_concatenated += sha_parts.back();
    }
    CHECK(composite_checksum(checksum_algorithm::sha256, sha_parts) ==
          to_base64(depot::sha256(sha_concatenated)) + "-3");

    std::vector<std::string> crc_parts;
    std::string crc_concatenated;
    for (const auto& p : parts) {
        std::uint32_t crc = crc32c(p);
        std::string raw{static_cast<char>(crc >> 24), static_cast<char>(crc >> 16),
                        static_cast<char>(crc >> 8), static_cast<char>(crc)};
        crc_parts.push_back(raw);
        crc_concatenated += raw;
    }
    std::uint32_t expected = crc32c(crc_concatenated);
    std::string expected_raw{static_cast<char>(expected >> 24), static_cast<char>(expected >> 16),
                             static_cast<char>(expected >> 8), static_cast<char>(expected)};
    CHECK(composite_checksum(checksum_algorithm::crc32c, crc_parts) == to_base64(expected_raw) + "-3");

    CHECK(composite_checksum(checksum_algorithm::crc32c, std::span(crc_parts).first(1)) ==
          to_base64(compute_checksum(checksum_algorithm::crc32c, crc_parts[0])) + "-1");
}

TEST_CASE("a composite checksum rejects an empty part list and part values of the wrong size")
{
    std::vector<std::string> none;
    CHECK_THROWS_AS(composite_checksum(checksum_algorithm::sha1, none), std::invalid_argument);
    std::vector<std::string> wrong = {std::string(4, '\0')};
    CHECK_THROWS_AS(composite_checksum(checksum_algorithm::sha1, wrong), std::invalid_argument);
}

TEST_CASE("a full-object checksum over parts equals the checksum of the whole object")
{
    std::mt19937_64 rng(2025);
    for (auto algorithm : crc_algorithms) {
        INFO(to_string(algorithm));
        for (int round = 0; round < 20; ++round) {
            std::vector<part_checksum> parts;
            std::string whole;
            std::size_t count = 1 + rng() % 6;
            for (std::size_t i = 0; i < count; ++i) {
                std::size_t size = rng() % 4 == 0 ? 0 : rng() % 30000;
                std::string data = random_string(size, rng);
                checksummer c(algorithm);
                c.update(data);
                parts.push_back({.raw = c.finish(), .size = size});
                whole += data;
            }
            REQUIRE(full_object_checksum(algorithm, parts) == compute_checksum(algorithm, whole));
        }
        CHECK(full_object_checksum(algorithm, {}) == compute_checksum(algorithm, ""));
    }
}

TEST_CASE("a full-object checksum is only defined for the CRCs")
{
    std::vector<part_checksum> parts = {{.raw = depot::sha1("a"), .size = 1}};
    CHECK_THROWS_AS(full_object_checksum(checksum_algorithm::sha1, parts), std::invalid_argument);
    std::vector<part_checksum> short_raw = {{.raw = "abc", .size = 1}};
    CHECK_THROWS_AS(full_object_checksum(checksum_algorithm::crc32, short_raw), std::invalid_argument);
}
