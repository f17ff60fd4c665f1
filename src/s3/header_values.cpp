#include "s3/header_values.hpp"

#include "s3/utf8.hpp"

#include <string>

namespace depot::s3 {

bool is_token(std::string_view name) noexcept
{
    if (name.empty())
        return false;
    for (char ch : name) {
        const auto c = static_cast<unsigned char>(ch);
        const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!alnum && std::string_view("!#$%&'*+-.^_`|~").find(ch) == std::string_view::npos)
            return false;
    }
    return true;
}

bool is_field_value(std::string_view value) noexcept
{
    for (char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c < 0x20 && c != '\t') || c == 0x7F)
            return false;
    }
    return is_valid_utf8(value);
}

result<void> validate_field_value(std::string_view name, std::string_view value)
{
    if (is_field_value(value))
        return ok();
    return make_error(errc::invalid_argument,
                      "The value of " + std::string(name) +
                          " contains a control character or is not valid UTF-8; header values may not",
                      std::string(name));
}

} // namespace depot::s3
