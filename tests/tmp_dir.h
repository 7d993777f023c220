// A test's scratch folder under /tmp, removed with everything in it when the object goes (a
// static one: when the process exits normally).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace panama::test_util {

class TmpDir {
 public:
  explicit TmpDir(const std::string& prefix = "panama_test_") {
    std::string t = "/tmp/" + prefix + "XXXXXX";
    if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp " + t + " failed");
    path_ = t;
  }
  ~TmpDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TmpDir(const TmpDir&) = delete;
  TmpDir& operator=(const TmpDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace panama::test_util
