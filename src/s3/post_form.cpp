#include "s3/post_form.hpp"

#include "common/strings.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace depot::s3 {
namespace {

error malformed_form()
{
    return make_error(errc::malformed_post_request,
                      "The body of your POST request is not well-formed multipart/form-data.");
}

/// Splits "type; a=b; c=\"d;e\"" at the semicolons outside quotes.
struct parameters
{
    std::string_view type;
    std::vector<std::pair<std::string_view, std::string>> values;
};

std::optional<parameters> parse_parameters(std::string_view value)
{
    parameters out;
    std::size_t i = 0;
    auto semicolon = value.find(';');
    out.type = trim_ows(value.substr(0, semicolon));
    if (semicolon == std::string_view::npos)
        return out;
    i = semicolon + 1;
    while (i < value.size()) {
        while (i < value.size() && (value[i] == ' ' || value[i] == '\t' || value[i] == ';'))
            ++i;
        if (i >= value.size())
            break;
        auto eq = value.find('=', i);
        if (eq == std::string_view::npos)
            return std::nullopt;
        auto name = trim_ows(value.substr(i, eq - i));
        i = eq + 1;
        while (i < value.size() && (value[i] == ' ' || value[i] == '\t'))
            ++i;
        std::string v;
        if (i < value.size() && value[i] == '"') {
            // Browsers escape '"' as %22 and keep backslashes as they are (Windows paths), so a quoted value
            // ends at the next quote.
            auto close = value.find('"', i + 1);
            if (close == std::string_view::npos)
                return std::nullopt;
            v = std::string(value.substr(i + 1, close - i - 1));
            i = close + 1;
        } else {
            auto end = value.find(';', i);
            v = std::string(trim_ows(value.substr(i, end == std::string_view::npos ? end : end - i)));
            i = end == std::string_view::npos ? value.size() : end;
        }
        out.values.emplace_back(name, std::move(v));
    }
    return out;
}

} // namespace

bool is_form_data(std::string_view content_type)
{
    auto semicolon = content_type.find(';');
    return iequals_ascii(trim_ows(content_type.substr(0, semicolon)), "multipart/form-data");
}

std::optional<std::string> form_data_boundary(std::string_view content_type)
{
    auto params = parse_parameters(content_type);
    if (!params || !iequals_ascii(params->type, "multipart/form-data"))
        return std::nullopt;
    for (auto& [name, value] : params->values)
        if (iequals_ascii(name, "boundary")) {
            if (value.empty() || value.size() > 70)
                return std::nullopt;
            for (char c : value)
                if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
                    return std::nullopt;
            return value;
        }
    return std::nullopt;
}

form_parser::form_parser(std::string_view boundary) : delimiter_("\r\n--" + std::string(boundary))
{
    // The first delimiter may open the body without the CRLF before it.
    buf_ = "\r\n";
}

void form_parser::feed(std::string_view bytes)
{
    data_ = {};
    if (pos_ > 0) {
        buf_.erase(0, pos_);
        pos_ = 0;
    }
    buf_.append(bytes);
}

result<form_parser::event> form_parser::parse_headers(std::string_view block)
{
    part_ = form_part{};
    bool disposition = false;
    while (!block.empty()) {
        auto eol = block.find("\r\n");
        auto line = block.substr(0, eol);
        block.remove_prefix(eol == std::string_view::npos ? block.size() : eol + 2);
        auto colon = line.find(':');
        if (colon == std::string_view::npos)
            return malformed_form();
        auto name = trim_ows(line.substr(0, colon));
        auto value = trim_ows(line.substr(colon + 1));
        if (iequals_ascii(name, "content-disposition")) {
            auto params = parse_parameters(value);
            if (disposition || !params || !iequals_ascii(params->type, "form-data"))
                return malformed_form();
            disposition = true;
            bool named = false;
            for (auto& [pname, pvalue] : params->values) {
                if (iequals_ascii(pname, "name")) {
                    part_.name = std::move(pvalue);
                    named = true;
                } else if (iequals_ascii(pname, "filename")) {
                    part_.filename = std::move(pvalue);
                }
            }
            if (!named || part_.name.empty())
                return malformed_form();
        } else if (iequals_ascii(name, "content-type")) {
            part_.content_type = std::string(value);
        }
    }
    if (!disposition)
        return malformed_form();
    return event::part_begin;
}

result<form_parser::event> form_parser::next()
{
    data_ = {};
    const std::string_view buf(buf_);
    switch (state_) {
    case state::preamble: {
        auto at = buf.find(delimiter_, pos_);
        if (at == std::string_view::npos) {
            // Keep what could be the start of a delimiter split across two feeds.
            if (buf.size() - pos_ >= delimiter_.size())
                pos_ = buf.size() - (delimiter_.size() - 1);
            if (finished_)
                return malformed_form();
            return event::need_more;
        }
        pos_ = at + delimiter_.size();
        state_ = state::after_delimiter;
        return next();
    }
    case state::after_delimiter: {
        if (buf.size() - pos_ < 2)
            return finished_ ? result<event>(malformed_form()) : result<event>(event::need_more);
        if (buf.substr(pos_, 2) == "--") {
            state_ = state::done;
            pos_ = buf.size();
            return event::end;
        }
        // Transport padding (spaces and tabs) may follow a delimiter before its CRLF.
        auto eol = buf.find("\r\n", pos_);
        if (eol == std::string_view::npos) {
            if (buf.size() - pos_ > 256 || finished_)
                return malformed_form();
            return event::need_more;
        }
        if (!trim_ows(buf.substr(pos_, eol - pos_)).empty())
            return malformed_form();
        pos_ = eol + 2;
        state_ = state::headers;
        return next();
    }
    case state::headers: {
        std::size_t end = buf.substr(pos_, 2) == "\r\n" ? pos_ : buf.find("\r\n\r\n", pos_);
        if (end == std::string_view::npos) {
            if (buf.size() - pos_ > max_part_header_bytes || finished_)
                return malformed_form();
            return event::need_more;
        }
        if (end - pos_ > max_part_header_bytes)
            return malformed_form();
        auto block = buf.substr(pos_, end - pos_);
        pos_ = end == pos_ ? end + 2 : end + 4;
        auto parsed = parse_headers(block);
        if (parsed)
            state_ = state::body;
        return parsed;
    }
    case state::body: {
        auto at = buf.find(delimiter_, pos_);
        if (at == pos_) {
            pos_ += delimiter_.size();
            state_ = state::after_delimiter;
            return event::part_end;
        }
        std::size_t safe = at;
        if (at == std::string_view::npos)
            safe = buf.size() - pos_ >= delimiter_.size() ? buf.size() - (delimiter_.size() - 1) : pos_;
        if (safe > pos_) {
            data_ = buf.substr(pos_, safe - pos_);
            pos_ = safe;
            return event::data;
        }
        if (finished_)
            return malformed_form();
        return event::need_more;
    }
    case state::done:
        return event::end;
    }
    return malformed_form();
}

} // namespace depot::s3
