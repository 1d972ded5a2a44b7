// The recorded RAPL machines of harness/tests/fixtures/rapl/ (see its README), by name.
#pragma once

#include <string>

namespace dlab::testing {

inline std::string rapl_fixture(const std::string& name) {
  return std::string(DLAB_TEST_SOURCE_DIR) + "/harness/tests/fixtures/rapl/" + name;
}

}  // namespace dlab::testing
