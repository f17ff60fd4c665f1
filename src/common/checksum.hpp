#pragma once
/// \file
/// S3 flexible checksums ("Checking object integrity in Amazon S3"). A client names an algorithm in
/// x-amz-checksum-algorithm / x-amz-sdk-checksum-algorithm and sends the value as x-amz-checksum-<alg>, in a
/// header or an aws-chunked trailer; S3 verifies it, stores it and returns it on GET/HEAD with
/// x-amz-checksum-mode: ENABLED. On the wire a value is the base64 of the raw big-endian checksum.
///
/// A multipart upload's object checksum is derived from its parts in one of two ways:
/// - COMPOSITE: the algorithm applied to the concatenated raw part checksums, reported as "<base64>-<N>".
///   Allowed for CRC32, CRC32C, SHA1 and SHA256.
/// - FULL_OBJECT: the CRC of the whole object, as if uploaded in one piece, computed from the part CRCs and
///   lengths by CRC combination. Allowed for CRC32, CRC32C and CRC64NVME. A single PutObject is always
///   FULL_OBJECT.
///
/// The CRCs themselves live in crc.hpp; SHA-1 and SHA-256 come from `depot::hasher`.

#include "common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace depot {

class hasher;

enum class checksum_algorithm
{
    crc32,
    crc32c,
    crc64nvme,
    sha1,
    sha256,
};

enum class checksum_type
{
    composite,
    full_object,
};

/// "CRC32", "CRC32C", "CRC64NVME", "SHA1" or "SHA256": the spelling of x-amz-checksum-algorithm and of the
/// ChecksumAlgorithm XML element.
std::string_view to_string(checksum_algorithm algorithm) noexcept;
/// Parses an algorithm name, ignoring ASCII case (the CLI passes `--checksum-algorithm crc32` through as is).
/// nullopt for anything else, including the empty string.
std::optional<checksum_algorithm> parse_checksum_algorithm(std::string_view name) noexcept;
/// "crc32", "crc32c", "crc64nvme", "sha1" or "sha256": the suffix of the x-amz-checksum-* header.
std::string_view header_suffix(checksum_algorithm algorithm) noexcept;
/// "x-amz-checksum-crc32" and so on (lower case).
std::string_view checksum_header_name(checksum_algorithm algorithm) noexcept;
/// The algorithm of an x-amz-checksum-<alg> header or trailer name, ignoring ASCII case; nullopt for any
/// other name, including x-amz-checksum-algorithm, -mode and -type.
std::optional<checksum_algorithm> checksum_algorithm_from_header(std::string_view header_name) noexcept;
/// "ChecksumCRC32" and so on: the XML element carrying the value in CompleteMultipartUpload, ListParts,
/// GetObjectAttributes and the copy results.
std::string_view checksum_xml_element(checksum_algorithm algorithm) noexcept;
/// Length of the raw value in bytes: 4 (CRC32, CRC32C), 8 (CRC64NVME), 20 (SHA1) or 32 (SHA256).
std::size_t checksum_size(checksum_algorithm algorithm) noexcept;
/// True for the CRCs, whose values can be combined (and so can be FULL_OBJECT for multipart uploads).
bool is_crc(checksum_algorithm algorithm) noexcept;

/// "COMPOSITE" or "FULL_OBJECT", as in x-amz-checksum-type and the ChecksumType XML element.
std::string_view to_string(checksum_type type) noexcept;
/// Parses "COMPOSITE" / "FULL_OBJECT", ignoring ASCII case; nullopt otherwise.
std::optional<checksum_type> parse_checksum_type(std::string_view name) noexcept;
/// Whether S3 accepts this pair for a multipart upload: CRC64NVME only FULL_OBJECT, SHA1/SHA256 only
/// COMPOSITE, CRC32/CRC32C either.
bool multipart_supports(checksum_algorithm algorithm, checksum_type type) noexcept;
/// The type used when CreateMultipartUpload names an algorithm without x-amz-checksum-type: FULL_OBJECT for
/// CRC64NVME, COMPOSITE for the others.
checksum_type default_multipart_checksum_type(checksum_algorithm algorithm) noexcept;

/// Streaming checksum over bytes. Not thread-safe; use one per stream. Movable, not copyable.
class checksummer
{
public:
    /// Throws only if the SHA digest cannot be set up (see `hasher`).
    explicit checksummer(checksum_algorithm algorithm);
    ~checksummer();
    checksummer(checksummer&&) noexcept;
    checksummer& operator=(checksummer&&) noexcept;

    void update(std::span<const std::byte> data);
    void update(std::string_view data) { update(std::as_bytes(std::span(data.data(), data.size()))); }
    /// Returns the raw big-endian checksum (`checksum_size()` bytes) of everything passed to update() since
    /// construction or the last reset(), and resets.
    std::string finish();
    /// Starts over, as if newly constructed.
    void reset();

    checksum_algorithm algorithm() const noexcept { return algorithm_; }
    /// Bytes passed to update() since construction or the last reset(): a part's length for FULL_OBJECT.
    std::uint64_t size() const noexcept { return size_; }

private:
    checksum_algorithm algorithm_;
    std::uint64_t crc_ = 0;
    std::uint64_t size_ = 0;
    std::unique_ptr<hasher> hasher_; ///< SHA1 and SHA256 only
};

/// One-shot raw checksum of `data`.
std::string compute_checksum(checksum_algorithm algorithm, std::span<const std::byte> data);
inline std::string compute_checksum(checksum_algorithm algorithm, std::string_view data)
{
    return compute_checksum(algorithm, std::as_bytes(std::span(data.data(), data.size())));
}

/// The raw big-endian form of a CRC value (4 or 8 bytes). Throws std::invalid_argument for SHA algorithms.
std::string crc_to_raw(checksum_algorithm algorithm, std::uint64_t crc);
/// The CRC value of a raw big-endian checksum. Throws std::invalid_argument for SHA algorithms or if `raw`
/// is not `checksum_size(algorithm)` bytes (raw values come from this module, not from clients).
std::uint64_t crc_from_raw(checksum_algorithm algorithm, std::string_view raw);
/// crc(A||B) from crc(A), crc(B) and B's length in bytes, in O(log len_b). Throws std::invalid_argument for
/// SHA algorithms.
std::uint64_t crc_combine(checksum_algorithm algorithm, std::uint64_t crc_a, std::uint64_t crc_b,
                          std::uint64_t len_b);

/// The wire form of a raw checksum: standard base64 with padding.
std::string encode_checksum(std::string_view raw);
/// Decodes a client-supplied x-amz-checksum-* value (header, trailer or XML element) to raw bytes.
/// errc::invalid_argument, with the header name as argument, if it is not base64 of exactly
/// `checksum_size(algorithm)` bytes (S3: InvalidRequest "Value for x-amz-checksum-crc32 header is invalid.").
result<std::string> decode_checksum(checksum_algorithm algorithm, std::string_view value);
/// Checks a client-supplied value against the raw checksum the server computed. errc::invalid_argument as
/// for decode_checksum() if the value is malformed; errc::bad_digest if it is well formed but differs (S3:
/// BadDigest "The CRC32 you specified did not match the calculated checksum.").
result<void> verify_checksum(checksum_algorithm algorithm, std::string_view value,
                             std::string_view actual_raw);

/// A part as recorded at UploadPart: its raw checksum and its length in bytes.
struct part_checksum
{
    std::string raw;
    std::uint64_t size = 0;
};

/// The COMPOSITE object checksum of a multipart upload, as S3 reports it: base64 of the algorithm applied to
/// the raw part checksums concatenated in part order, then "-" and the number of parts. Throws
/// std::invalid_argument if `part_raw_checksums` is empty or a value is not `checksum_size(algorithm)`
/// bytes.
std::string composite_checksum(checksum_algorithm algorithm, std::span<const std::string> part_raw_checksums);
/// The FULL_OBJECT checksum of a multipart upload as a raw value: the CRC of the parts' data concatenated in
/// order, exactly what a single upload of the whole object would have. Encode it with encode_checksum() and
/// check a client's value with verify_checksum(). An empty list gives the CRC of no data. Throws
/// std::invalid_argument for SHA algorithms or if a part's raw value is not `checksum_size(algorithm)` bytes.
std::string full_object_checksum(checksum_algorithm algorithm, std::span<const part_checksum> parts);

} // namespace depot
