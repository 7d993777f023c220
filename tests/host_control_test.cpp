// The stand-in's control socket (ControlServer) on a shared machine, and the host's key files:
// what is at the socket's path, bounded connections and buffers, and a client that never reads.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "controller.h"
#include "mgmt_client.h"

namespace {

using panama::host::ControlServer;
using panama::host::Fd;
using Clock = std::chrono::steady_clock;

std::string scratch(const std::string& name) {
  const std::string p = ::testing::TempDir() + "/ctl_" + name + "_" + std::to_string(::getpid());
  ::unlink(p.c_str());
  return p;
}

sockaddr_un addr_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  return a;
}

Fd connect_to(const std::string& path) {
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_un a = addr_of(path);
  EXPECT_EQ(connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  return fd;
}

void send_all(int fd, const std::string& s) {
  ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
}

// What the client can read without blocking; eof set when the server has closed the connection.
std::string drain(int fd, bool& eof) {
  std::string got;
  eof = false;
  char b[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, b, sizeof b, MSG_DONTWAIT);
    if (n > 0) {
      got.append(b, static_cast<size_t>(n));
      continue;
    }
    eof = n == 0;
    return got;
  }
}

std::string handler(const std::string& line) {
  if (line == "big") return std::string(60000, 'x');  // a large reply fills a non-reader's buffers fast
  if (line == "ping") return "ok";
  throw std::runtime_error("unknown request");
}

// Runs the server's loop for ms milliseconds; returns the longest single poll() call.
Clock::duration run_loop(ControlServer& s, int ms) {
  Clock::duration worst{};
  for (const auto end = Clock::now() + std::chrono::milliseconds(ms); Clock::now() < end;) {
    const auto t0 = Clock::now();
    s.poll(handler);
    worst = std::max(worst, Clock::now() - t0);
    ::usleep(1000);
  }
  return worst;
}

TEST(HostControl, RefusesToReplaceAFileOrALiveServer) {
  const std::string path = scratch("file");
  std::ofstream(path) << "precious\n";
  try {
    ControlServer s(path);
    FAIL() << "a regular file was replaced";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a socket"), std::string::npos) << e.what();
  }
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
  ::unlink(path.c_str());

  const std::string sp = scratch("live");
  ControlServer live(sp);
  try {
    ControlServer second(sp);
    FAIL() << "a live server's socket was replaced";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("already listening"), std::string::npos) << e.what();
  }
  // The first server still answers.
  Fd c = connect_to(sp);
  send_all(c.get(), "ping\n");
  run_loop(live, 50);
  bool eof = false;
  EXPECT_EQ(drain(c.get(), eof), "ok\n");
}

TEST(HostControl, ReplacesAStaleSocket) {
  const std::string path = scratch("stale");
  {
    Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const sockaddr_un a = addr_of(path);
    ASSERT_EQ(bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  }  // closed without unlinking: what a crashed stand-in leaves
  ControlServer s(path);
  Fd c = connect_to(path);
  send_all(c.get(), "ping\n");
  run_loop(s, 50);
  bool eof = false;
  EXPECT_EQ(drain(c.get(), eof), "ok\n");
}

TEST(HostControl, BoundsConnectionsAndLineLength) {
  const std::string path = scratch("bounds");
  ControlServer s(path);
  std::vector<Fd> conns;
  for (size_t i = 0; i < ControlServer::kMaxConns; ++i) {
    conns.push_back(connect_to(path));
    run_loop(s, 2);
  }
  Fd extra = connect_to(path);
  run_loop(s, 30);
  bool eof = false;
  const std::string refused = drain(extra.get(), eof);
  EXPECT_NE(refused.find("error too many"), std::string::npos) << refused;
  EXPECT_TRUE(eof);
  // Each of the others is served.
  for (auto& c : conns) send_all(c.get(), "ping\n");
  run_loop(s, 30);
  for (auto& c : conns) EXPECT_EQ(drain(c.get(), eof), "ok\n");

  // A line longer than kMaxLine: an error reply, then the connection is closed.
  Fd longc = std::move(conns.back());
  conns.pop_back();
  const std::string big(ControlServer::kMaxLine + 100, 'a');
  std::string got;
  size_t sent = 0;
  for (auto end = Clock::now() + std::chrono::seconds(5); Clock::now() < end && !eof;) {
    if (sent < big.size()) {
      const ssize_t n = ::send(longc.get(), big.data() + sent, big.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) sent += static_cast<size_t>(n);
    }
    run_loop(s, 2);
    got += drain(longc.get(), eof);
  }
  EXPECT_TRUE(eof);
  EXPECT_NE(got.find("error request line longer than"), std::string::npos) << got.substr(0, 200);
}

// A client that sends requests and never reads its replies neither stalls the loop nor another
// client; once its queued replies pass the bound it is disconnected.
TEST(HostControl, ClientThatNeverReadsDoesNotStallTheLoop) {
  const std::string path = scratch("slow");
  ControlServer s(path);
  Fd slow = connect_to(path);
  Fd good = connect_to(path);
  std::string sreq;
  for (int i = 0; i < 40; ++i) sreq += "big\n";  // 40 x 60 kB of replies: more than any socket buffer
  send_all(slow.get(), sreq);
  int answered = 0;
  Clock::duration worst{};
  for (int round = 0; round < 20; ++round) {
    send_all(good.get(), "ping\n");
    worst = std::max(worst, run_loop(s, 10));
    bool eof = false;
    answered += drain(good.get(), eof) == "ok\n";
  }
  EXPECT_EQ(answered, 20);
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(worst).count(), 200);
  // The slow client was disconnected: it finds fewer replies than it asked for, then the end.
  bool eof = false;
  std::string got;
  for (auto end = Clock::now() + std::chrono::seconds(5); Clock::now() < end && !eof;) got += drain(slow.get(), eof);
  EXPECT_TRUE(eof);
  EXPECT_LT(got.size(), 40u * 60001u);
}

}  // namespace
