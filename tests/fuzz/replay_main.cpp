// Replays inputs through a libFuzzer harness without libFuzzer, so that the normal build (any
// compiler, sanitized in CI) runs the seeds and every saved crash input on each change:
// each regular file under the given files and folders (recursively, in path order) is fed once
// to LLVMFuzzerTestOneInput. A harness's failed check aborts; its name is printed before each
// input runs, so the log names the input that did it.
//
//   hwprof_<target>_replay FILE_OR_FOLDER...
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

// The regular files under `path`, or false when it is neither a file nor a readable folder.
bool collect(const fs::path& path, std::vector<fs::path>& files) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
    return true;
  }
  if (!fs::is_directory(path, ec)) return false;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  return !ec;
}

bool replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  // A buffer of exactly the input's size, as libFuzzer passes it: ASan sees a read past its end.
  const std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.is_open() || in.bad()) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return false;
  }
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), data.size());
  LLVMFuzzerTestOneInput(data.data(), data.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (!collect(argv[i], files)) {
      std::fprintf(stderr, "replay: %s is neither a file nor a readable folder\n", argv[i]);
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input under the %d paths given\n", argc - 1);
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::size_t unreadable = 0;
  for (const fs::path& file : files) {
    if (!replay(file)) ++unreadable;
  }
  std::printf("replay: %zu inputs, each returned as the harness requires\n", files.size() - unreadable);
  return unreadable == 0 ? 0 : 2;
}
