// Inputs a user names (harness/src/files.cc): read_input_file and MappedInputFile give the same
// bytes and refuse the same things with the same words; a file whose size says 0 (/proc's) is read.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "dispatchlab/harness/files.h"

namespace dlab {
namespace {

namespace fs = std::filesystem;

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("dlab_input_files_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  fs::path write(const std::string& name, const std::string& content) const {
    std::ofstream(dir / name, std::ios::binary) << content;
    return dir / name;
  }
};

std::string mapped(const std::string& path) {
  MappedInputFile f(path);
  return {reinterpret_cast<const char*>(f.data()), f.size()};
}

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(InputFiles, MappedAndReadGiveTheSameBytes) {
  Scratch s;
  std::string content(100000, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7);
  const std::string path = s.write("module.wasm", content).string();
  EXPECT_EQ(read_input_file(path), content);
  EXPECT_EQ(mapped(path), content);
  const std::string empty = s.write("empty", "").string();
  EXPECT_EQ(mapped(empty), "");
  EXPECT_EQ(MappedInputFile(empty).size(), 0u);
}

TEST(InputFiles, AFileWhoseSizeSaysZeroIsReadNotMapped) {
  // /proc's files report st_size 0 and have content.
  const std::string read = read_input_file("/proc/self/status");
  ASSERT_FALSE(read.empty());
  const std::string m = mapped("/proc/self/status");
  EXPECT_FALSE(m.empty());
  EXPECT_EQ(m.substr(0, 5), "Name:");
}

TEST(InputFiles, BothRefuseTheSameThingsInTheSameWords) {
  Scratch s;
  const std::string missing = (s.dir / "missing.wasm").string(), dir = s.dir.string(), fifo = (s.dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {missing, dir, fifo}) {
    const std::string read = error_of([&] { read_input_file(path); }), map = error_of([&] { MappedInputFile f(path); });
    EXPECT_EQ(read.rfind("cannot read " + path + ": ", 0), 0u) << read;
    EXPECT_EQ(map, read);
  }
  EXPECT_NE(error_of([&] { MappedInputFile f(missing); }).find("no such file"), std::string::npos);
  EXPECT_NE(error_of([&] { MappedInputFile f(dir); }).find("a directory, not a file"), std::string::npos);
  EXPECT_NE(error_of([&] { MappedInputFile f(fifo); }).find("not a regular file"), std::string::npos);  // and it did not block
}

}  // namespace
}  // namespace dlab
