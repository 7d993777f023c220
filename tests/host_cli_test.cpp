// panama-host: every bad input is one clear line and a non-zero exit, nothing written.
#include "host_test_util.h"

#include <cstring>
#include <string>

namespace {

namespace {

struct Run {
  int rc;
  std::string err;
};

// A private directory per test process (ctest runs tests in parallel).
std::string scratch() {
  const std::string d = testing::TempDir() + "/host_cli_" + std::to_string(getpid());
  (void)std::system(("mkdir -p " + d).c_str());
  return d;
}

Run cli(const std::string& args) {
  const std::string tmp = scratch() + "/stderr.txt";
  const std::string cmd = std::string(PANAMA_HOST) + " " + args + " >/dev/null 2>" + tmp;
  const int st = std::system(cmd.c_str());
  std::ifstream in(tmp);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : 128, s};
}

void expect_error(const std::string& args, const std::string& needle) {
  const Run r = cli(args);
  EXPECT_NE(r.rc, 0) << args;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
}

}  // namespace

TEST(HostCli, WorkerBadInput) {
  const std::string d = scratch();
  {
    std::ofstream(d + "/odd.bin") << "12345";
    std::ofstream g(d + "/g.bin", std::ios::binary);
    const float x[4] = {1, 2, 3, 4};
    g.write(reinterpret_cast<const char*>(x), sizeof x);
  }
  const std::string base = "worker --iface lo --job 1 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 ";
  const std::string out = " --out " + d + "/never.bin";
  expect_error(base + "--in " + d + "/missing.bin" + out, "cannot open");
  expect_error(base + "--in " + d + "/odd.bin" + out, "not a multiple of 4");
  expect_error(base + "--in " + d + "/g.bin --backend foo" + out, "--backend must be udp, tins, dpdk or xdp");
  expect_error(base + "--in " + d + "/g.bin --eal=--no-huge" + out, "--eal");
  expect_error(base + "--in " + d + "/g.bin --backend tins --eal=--no-huge" + out, "--eal");
  expect_error(base + "--in " + d + "/g.bin --backend tins --agg-mac 02:aa" + out, "malformed MAC");
  for (const char* b : {"tins", "dpdk"})
    expect_error("worker --iface nosuchif0 --job 1 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 --in " +
                     d + "/g.bin --backend " + b + out,
                 "nosuchif0");
  expect_error(base + "--in " + d + "/g.bin --format fp64" + out, "--format");
  expect_error(base + "--in " + d + "/g.bin --trees 2 --first-vid 1,2,3" + out, "--first-vid");
  expect_error(base + "--in " + d + "/g.bin --first-vid x" + out, "not a VID");
  expect_error(base + "--in " + d + "/g.bin --window-max 4 --window-init 8" + out, "window");
  expect_error("worker --iface nosuchif0 --job 1 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 --in " + d +
                   "/g.bin" + out,
               "nosuchif0");
  expect_error(
      "worker --iface lo --job 1 --rank 2 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 --in " + d + "/g.bin" + out,
      "rank");
  expect_error("worker --iface lo --job 70000 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 --in " + d +
                   "/g.bin" + out,
               "--job");
  expect_error("worker --iface lo --job 1 --rank 0 --world 2 --agg-ip 10.1 --group-ip 239.9.9.9 --in " + d +
                   "/g.bin --mtu 1500" + out,
               "10.1");
  expect_error("worker --iface lo --job 1 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 10.9.9.9 --in " + d +
                   "/g.bin --mtu 1500" + out,
               "not multicast");
  for (const char* opt : {"--alloc-ports {}", "--alloc-retry 2", "--alloc-timeout-ms 60000", "--fallback-port 9",
                          "--fallback-backend udp", "--fallback-timeout-ms 1000", "--fallback-rto-ms 5"}) {
    const std::string name(opt, std::strchr(opt, ' '));
    expect_error(base + "--in " + d + "/g.bin " + opt + out, name + ": needs --allocator");
  }
  EXPECT_FALSE(std::ifstream(d + "/never.bin").good());
  EXPECT_NE(cli("").rc, 0);
  EXPECT_NE(cli("worker --iface lo").rc, 0);  // missing required options
  (void)std::system(("rm -rf " + d).c_str());
}

TEST(HostCli, SwitchBadInput) {
  const std::string d = scratch();
  const std::string rtl = std::string(PANAMA_SOURCE_DIR) + "/rtl_out/p4_10g_200mhz";
  std::ofstream(d + "/ctx.json")
      << R"({"contexts":[{"jid":1,"tid":0,"members":[0,1,2],"mode":"multicast","group_mac":"01:00:5e:01:01:01","group_ip":"239.1.1.1"}]})";
  std::ofstream(d + "/bad.json") << R"({"contexts":[{"jid":1,"tid":0,"members":[],"mode":"multicast"}]})";
  expect_error("switch --rtl " + d + "/nodir --contexts " + d + "/ctx.json --ifaces lo", "config.json");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/bad.json --ifaces lo", "context 0");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/ctx.json --ifaces lo,lo,lo,lo,lo", "5 interfaces");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/ctx.json --ifaces lo,lo", "member port 2");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/ctx.json --ifaces lo,lo,lo", "given twice");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/ctx.json --ifaces a0x,b0x,c0x", "no interface 'a0x'");
  (void)std::system(("rm -rf " + d).c_str());
}

}  // namespace
