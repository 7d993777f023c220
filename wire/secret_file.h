// Reading a secret (a management key file: docs/mgmt.md) the one way every tool does: the file
// must be a regular file that neither its group nor others may read or write (mode 600 or
// stricter), else one error naming the file, its mode and the fix. The contents are never part
// of a message. Header only: panama-gen and panama-host both read keys.
#pragma once

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace panama::wire {

// The text of the secret file at path; flag names the option that gave it (for the messages).
inline std::string read_secret_file(const std::string& path, const std::string& flag) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error(flag + ": cannot read " + path);
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(flag + ": " + path + " is not a regular file");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    throw std::runtime_error(flag + ": " + path + " is readable or writable by others (mode " + mode +
                             "): a key must be private (chmod 600 " + path + ")");
  }
  std::ifstream in(path);
  if (!in) throw std::runtime_error(flag + ": cannot read " + path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace panama::wire
