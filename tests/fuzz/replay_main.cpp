// SPDX-License-Identifier: MIT
// Runs the fuzz target over files and directories of inputs, without libFuzzer: the corpus is a
// regression test in every build. Usage: fuzz_replay PATH...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void run(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::fprintf(stderr, "fuzz_replay: cannot read %s\n", file.c_str());
    std::exit(1);
  }
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH...\n", argv[0]);
    return 2;
  }
  std::size_t inputs = 0;
  for (int a = 1; a < argc; ++a) {
    const std::filesystem::path path(argv[a]);
    if (std::filesystem::is_directory(path)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(path))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) run(f), ++inputs;
    } else if (std::filesystem::is_regular_file(path)) {
      run(path), ++inputs;
    } else {
      std::fprintf(stderr, "fuzz_replay: no such file or directory: %s\n", argv[a]);
      return 1;
    }
  }
  if (inputs == 0) {
    std::fprintf(stderr, "fuzz_replay: no inputs found\n");
    return 1;
  }
  std::printf("fuzz_replay: %zu inputs, all passed\n", inputs);
  return 0;
}
