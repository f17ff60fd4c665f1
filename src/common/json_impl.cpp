// Boost.JSON, compiled once for the whole program (header-only use would compile it into every user). Why
// Boost.JSON is Depot's one JSON library: common/json.hpp.
#include <boost/json/src.hpp>
