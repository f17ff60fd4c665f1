// The single translation unit that compiles Asio (BOOST_ASIO_SEPARATE_COMPILATION is set project-wide).
#include <boost/asio/impl/src.hpp>
