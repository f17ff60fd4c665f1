// Boost.JSON, compiled once for the whole program (header-only use would compile it into every user).
#include <boost/json/src.hpp>
