#pragma once
// Code-point level string helpers with Python's str semantics. Template strings are UTF-8
// std::strings; Python indexes, slices, measures and case-maps them by code point, so every
// operation that Python defines per character goes through these.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgeinfer::jinja::text {

// Decodes UTF-8; an invalid byte becomes U+FFFD (inputs come from JSON, so this is rare).
std::u32string decode(std::string_view s);
void append_utf8(std::string& out, char32_t cp);
std::string encode(std::u32string_view s);
size_t length(std::string_view s);  // number of code points

bool is_space(char32_t c);      // str.isspace
bool is_linebreak(char32_t c);  // boundaries of str.splitlines
bool is_printable(char32_t c);  // str.isprintable (repr keeps these unescaped)
bool is_alpha(char32_t c);
bool is_digit(char32_t c);  // decimal digits (Nd)
bool is_alnum(char32_t c);
bool is_word(char32_t c);  // regex \w
bool is_cased(char32_t c);
bool is_lower(char32_t c);
bool is_upper(char32_t c);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string capitalize(std::string_view s);    // str.capitalize
std::string title_method(std::string_view s);  // str.title
std::string swapcase(std::string_view s);

// str.strip/lstrip/rstrip; `chars` null strips whitespace.
std::string strip(std::string_view s, const std::string* chars, bool left, bool right);
// str.split(sep=None, maxsplit=-1) and rsplit.
std::vector<std::string> split_whitespace(std::string_view s, long maxsplit, bool from_right);
std::vector<std::string> split_sep(std::string_view s, std::string_view sep, long maxsplit, bool from_right);
std::vector<std::string> splitlines(std::string_view s, bool keepends);
std::string replace(std::string_view s, std::string_view old, std::string_view repl, long count);
size_t count(std::string_view s, std::string_view sub);
// Code-point index of the first/last occurrence, or -1.
long find(std::string_view s, std::string_view sub, bool last);

bool all_of(std::string_view s, bool (*pred)(char32_t));
bool is_lower_str(std::string_view s);  // str.islower
bool is_upper_str(std::string_view s);  // str.isupper

}  // namespace edgeinfer::jinja::text
