// The single translation unit that compiles Beast (BOOST_BEAST_SEPARATE_COMPILATION is set project-wide).
#include <boost/beast/src.hpp>
