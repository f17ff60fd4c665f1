#pragma once
/// \file
/// POST Object's request body: multipart/form-data (RFC 7578) parsed incrementally, so the file part
/// streams through in buffers of whatever size the connection delivers and is never held whole in memory.
/// Pure: no I/O; the caller feeds bytes and pulls events.
///
///     form_parser p(boundary);
///     for (;;) switch (p.next()) {           // result<event>
///         need_more:  p.feed(bytes) or p.finish() at the end of the input
///         part_begin: p.part() names the field (and its filename and Content-Type)
///         data:       p.data() is the next piece of the part's value (valid until the next feed)
///         part_end:   the part's value is complete
///         end:        the closing delimiter was seen (what follows it is ignored)
///     }
/// Errors (malformed_post_request): no delimiter at all, a part without `Content-Disposition: form-data;
/// name=...`, part headers above 8 KiB, junk after a delimiter, input ending inside the form.

#include "common/result.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace depot::s3 {

/// The boundary of a `multipart/form-data; boundary=...` Content-Type (media type case-insensitive,
/// boundary quoted or not, 1 to 70 characters); nullopt for another media type or a missing or invalid
/// boundary.
std::optional<std::string> form_data_boundary(std::string_view content_type);

/// Whether a Content-Type names multipart/form-data (whatever its parameters).
bool is_form_data(std::string_view content_type);

/// One part's headers.
struct form_part
{
    std::string name; ///< as sent (field names are compared case-insensitively by the caller)
    std::optional<std::string> filename;
    std::string content_type; ///< empty when the part has none
};

class form_parser
{
public:
    enum class event
    {
        need_more,
        part_begin,
        data,
        part_end,
        end,
    };

    /// The most bytes of one part's headers.
    static constexpr std::size_t max_part_header_bytes = 8 * 1024;

    explicit form_parser(std::string_view boundary);

    /// Appends input. Invalidates the view data() returned.
    void feed(std::string_view bytes);
    /// Says the input has ended: a form still open then is malformed.
    void finish() noexcept { finished_ = true; }
    /// The next event.
    result<event> next();

    const form_part& part() const noexcept { return part_; }
    std::string_view data() const noexcept { return data_; }

private:
    enum class state
    {
        preamble,
        after_delimiter,
        headers,
        body,
        done,
    };
    result<event> parse_headers(std::string_view block);

    std::string delimiter_; ///< "\r\n--" + boundary
    std::string buf_;
    std::size_t pos_ = 0; ///< first unconsumed byte of buf_
    state state_ = state::preamble;
    bool finished_ = false;
    form_part part_;
    std::string_view data_;
};

} // namespace depot::s3
