// What tests/layering/check_includes.py must find (the ctest registry_repo_check_finds_includes expects it
// to fail on this file: two includes of registry/repo/, the service header is allowed). Not compiled.
#include "registry/repo/multipart_uploads.hpp"
#include "registry/service/multipart_service.hpp"
#  include <registry/repo/versions.hpp>
