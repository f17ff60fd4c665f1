// The single translation unit that compiles Asio's SSL support (BOOST_ASIO_SEPARATE_COMPILATION is set
// project-wide; asio_impl.cpp compiles the rest of Asio): depotd's TLS listener and depotctl's https client.
#include <boost/asio/ssl/impl/src.hpp>
