#include "s3/object_lock.hpp"

#include "s3/xml.hpp"
#include "s3/xml_read.hpp"

namespace depot::s3 {

using namespace xml_read;

std::string_view to_string(retention_mode m) noexcept
{
    return m == retention_mode::compliance ? "COMPLIANCE" : "GOVERNANCE";
}

std::optional<retention_mode> parse_retention_mode(std::string_view text) noexcept
{
    if (text == "GOVERNANCE")
        return retention_mode::governance;
    if (text == "COMPLIANCE")
        return retention_mode::compliance;
    return std::nullopt;
}

result<object_lock_configuration> parse_object_lock_configuration(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "ObjectLockConfiguration");
    if (!root)
        return std::move(root).error();
    auto enabled = child(*root, "ObjectLockEnabled");
    if (!enabled || trim(text(enabled)) != "Enabled")
        return malformed();
    object_lock_configuration config;
    auto rule = child(*root, "Rule");
    if (!rule)
        return config;
    auto dr = child(rule, "DefaultRetention");
    if (!dr)
        return malformed();
    auto mode_node = child(dr, "Mode");
    auto days_node = child(dr, "Days");
    auto years_node = child(dr, "Years");
    if (!mode_node || static_cast<bool>(days_node) == static_cast<bool>(years_node))
        return malformed();
    auto mode = parse_retention_mode(trim(text(mode_node)));
    if (!mode)
        return malformed();
    const std::string period_raw = text(days_node ? days_node : years_node);
    const auto period_text = trim(period_raw);
    // A sign is a number S3 reads (and refuses as not positive); anything else is not a number.
    const bool negative = period_text.starts_with('-');
    auto period = parse_int(negative ? period_text.substr(1) : period_text);
    if (!period)
        return malformed();
    const int max = days_node ? max_retention_days : max_retention_years;
    if (negative || *period <= 0)
        return make_error(errc::invalid_argument, "Default retention period must be a positive integer value",
                          days_node ? "Days" : "Years");
    if (*period > max)
        return make_error(errc::invalid_argument,
                          std::string("Default retention period is too large (at most ") +
                              (days_node ? "36500 days)" : "100 years)"),
                          days_node ? "Days" : "Years");
    default_retention r{.mode = *mode};
    (days_node ? r.days : r.years) = *period;
    config.rule = r;
    return config;
}

std::string object_lock_configuration_xml(const std::optional<default_retention>& rule)
{
    xml_writer w;
    w.open("ObjectLockConfiguration", s3_xmlns).element("ObjectLockEnabled", "Enabled");
    if (rule) {
        w.open("Rule").open("DefaultRetention").element("Mode", to_string(rule->mode));
        if (rule->days > 0)
            w.element("Days", rule->days);
        else
            w.element("Years", rule->years);
    }
    return std::move(w).finish();
}

result<std::optional<retention>> parse_retention(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "Retention");
    if (!root)
        return std::move(root).error();
    auto mode_node = child(*root, "Mode");
    auto date_node = child(*root, "RetainUntilDate");
    if (!mode_node && !date_node)
        return std::optional<retention>();
    if (!mode_node || !date_node)
        return malformed();
    auto mode = parse_retention_mode(trim(text(mode_node)));
    auto date = parse_iso8601(trim(text(date_node)));
    if (!mode || !date)
        return malformed();
    return std::optional(retention{.mode = *mode, .retain_until = *date});
}

std::string retention_xml(const retention& r)
{
    xml_writer w;
    w.open("Retention", s3_xmlns)
        .element("Mode", to_string(r.mode))
        .element("RetainUntilDate", format_iso8601(r.retain_until));
    return std::move(w).finish();
}

result<bool> parse_legal_hold(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "LegalHold");
    if (!root)
        return std::move(root).error();
    auto status = child(*root, "Status");
    if (!status)
        return malformed();
    const std::string raw = text(status);
    const auto v = trim(raw);
    if (v == "ON")
        return true;
    if (v == "OFF")
        return false;
    return malformed();
}

std::string legal_hold_xml(bool on)
{
    xml_writer w;
    w.open("LegalHold", s3_xmlns).element("Status", on ? "ON" : "OFF");
    return std::move(w).finish();
}

result<requested_lock> parse_lock_headers(const lock_headers& h, time_point now)
{
    requested_lock out;
    if (h.mode.has_value() != h.retain_until.has_value())
        return make_error(errc::invalid_argument,
                          "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be "
                          "supplied");
    if (h.mode) {
        auto mode = parse_retention_mode(*h.mode);
        if (!mode)
            return make_error(errc::invalid_argument, "Unknown wormMode directive.",
                              "x-amz-object-lock-mode");
        auto date = parse_iso8601(trim(*h.retain_until));
        if (!date)
            return make_error(errc::invalid_argument,
                              "The retain until date must be provided in ISO 8601 format",
                              "x-amz-object-lock-retain-until-date");
        if (*date <= now)
            return make_error(errc::invalid_argument, "The retain until date must be in the future!",
                              "x-amz-object-lock-retain-until-date");
        out.retention = retention{.mode = *mode, .retain_until = *date};
    }
    if (h.legal_hold) {
        if (*h.legal_hold == "ON")
            out.legal_hold = true;
        else if (*h.legal_hold == "OFF")
            out.legal_hold = false;
        else
            return make_error(errc::invalid_argument, "Legal Hold must be either of 'ON' or 'OFF'",
                              "x-amz-object-lock-legal-hold");
    }
    return out;
}

} // namespace depot::s3
