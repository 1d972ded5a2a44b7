#include "dispatchlab/harness/files.h"

#include <fstream>
#include <iterator>

namespace dlab {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace dlab
