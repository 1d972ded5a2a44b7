// libfmt compiled into dlab-run, which is linked statically: Debian's libfmt-dev ships the shared
// library only. format-inl.h without FMT_HEADER_ONLY defines fmt's out-of-line functions as the
// library does; the explicit instantiations are the ones the interpreter's code calls. No
// std::locale (FMT_STATIC_THOUSANDS_SEPARATOR, set for this file): building it is a third of an
// empty module's start-up, and nothing here formats by locale.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
template void vformat_to<char>(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
}  // namespace detail
FMT_END_NAMESPACE
