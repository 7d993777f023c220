// panama_torch's core without PyTorch (docs/torch.md "Tests"): the configuration's validation, and
// the Channel over in-process links to the soft stand-in (standin/loopback.h), checked
// against the tree-order sum of numerics/ref_float.h.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <future>
#include <random>
#include <thread>

#include <unistd.h>

#include "channel.h"
#include "config.h"
#include "design.h"
#include "loopback.h"
#include "ref_float.h"
#include "switch.h"
#include "tmp_dir.h"

namespace panama::torchx {
namespace {

using Env = std::map<std::string, std::string>;

// One scratch folder per process, removed at exit.
std::string tmpdir() {
  static const panama::test_util::TmpDir d("panama_torch_test.");
  return d.path();
}

// A design directory with config.json only (what the backend reads of it).
std::string design_dir(Format f, int ports = 4) {
  const std::string d = tmpdir() + "/design_" + panama::to_string(f) + "_" + std::to_string(ports);
  Inputs in;
  in.ports = ports;
  in.gbps = 10;
  in.mhz = 200;
  in.format = f;
  std::system(("mkdir -p " + d).c_str());
  std::ofstream(d + "/config.json") << panama::Config::derive(in).to_json().dump(2);
  return d;
}

Env base_env(Format f = Format::fp32) {
  return {{"PANAMA_DESIGN", design_dir(f)},
          {"PANAMA_IFACE", "lo"},
          {"PANAMA_AGG_IP", "10.98.0.254"},
          {"PANAMA_GROUP_IP", "239.1.1.1"},
          {"PANAMA_JOB", "7"},
          {"PANAMA_MTU", "1500"},
          {"PANAMA_TREES", "2"},
          {"PANAMA_TIMEOUT_MS", "800"}};
}

std::string config_error(const Env& e) {
  try {
    Config::from_map(e);
  } catch (const PanamaError& x) {
    EXPECT_EQ(x.cause, Cause::config);
    return x.what();
  }
  return "";
}

TEST(TorchConfig, ReadsTheDesignAndDerivesTheJob) {
  Env e = base_env(Format::bf16);
  e["PANAMA_FIRST_VID"] = "5,9";
  e["PANAMA_SOMETHING"] = "1";
  e["PANAMA_HOST_DEBUG"] = "1";  // the host library's knob: not reported
  const Config c = Config::from_map(e);
  EXPECT_EQ(c.format, Format::bf16);
  EXPECT_EQ(c.design_max_elems, 725);
  EXPECT_EQ(c.unknown_env, std::vector<std::string>{"PANAMA_SOMETHING"});
  const host::JobParams p = c.job_params(2, 3);
  EXPECT_EQ(p.elem_bytes, 2);
  EXPECT_EQ(p.count, 725);  // min(MAX_ELEMS, (1500 - 50) / 2)
  EXPECT_EQ(p.first_vids, (std::vector<uint32_t>{5, 9}));
  EXPECT_EQ(p.window.max, 6);  // floor(12 / T), as panama-host worker
  EXPECT_EQ(p.window.init, 4);
  // Chunks are whole vectors of C - 1 data elements (repair on): 4 MiB / 2 bytes.
  EXPECT_EQ(c.chunk_elems(p) % 724, 0u);
  EXPECT_LE(c.chunk_elems(p) * 2, size_t{4} << 20);
}

TEST(TorchConfig, EveryBadSettingIsOneLineNamingIt) {
  const auto with = [](const std::string& k, const std::string& v) {
    Env e = base_env();
    if (v == "<unset>")
      e.erase(k);
    else
      e[k] = v;
    return config_error(e);
  };
  EXPECT_NE(with("PANAMA_DESIGN", "<unset>").find("PANAMA_DESIGN is not set"), std::string::npos);
  EXPECT_NE(with("PANAMA_DESIGN", "/nonexistent").find("no config.json"), std::string::npos);
  EXPECT_NE(with("PANAMA_IFACE", "<unset>").find("PANAMA_IFACE is not set"), std::string::npos);
  EXPECT_NE(with("PANAMA_JOB", "70000").find("PANAMA_JOB='70000'"), std::string::npos);
  EXPECT_NE(with("PANAMA_JOB", "-1").find("PANAMA_JOB"), std::string::npos);
  EXPECT_NE(with("PANAMA_TREES", "0").find("PANAMA_TREES"), std::string::npos);
  EXPECT_NE(with("PANAMA_GROUP_IP", "10.0.0.1").find("not a multicast"), std::string::npos);
  EXPECT_NE(with("PANAMA_AGG_IP", "239.0.0.1").find("is a multicast"), std::string::npos);
  EXPECT_NE(with("PANAMA_AGG_IP", "10.0.0").find("not an IPv4"), std::string::npos);
  EXPECT_NE(with("PANAMA_MAX_ELEMS", "400").find("exceeds the design's MAX_ELEMS 362"), std::string::npos);
  EXPECT_NE(with("PANAMA_FIRST_VID", "1,2,3").find("one per tree (2)"), std::string::npos);
  EXPECT_NE(with("PANAMA_EAL", "-l 2").find("PANAMA_EAL"), std::string::npos);
  EXPECT_NE(with("PANAMA_WINDOW_MAX", "0.5").find("PANAMA_WINDOW_MAX"), std::string::npos);
  EXPECT_NE(with("PANAMA_BUFFER_MB", "0").find("PANAMA_BUFFER_MB"), std::string::npos);
  for (const char* k : {"PANAMA_JOB", "PANAMA_TREES", "PANAMA_BUFFER_MB"})
    EXPECT_EQ(with(k, "1x").find('\n'), std::string::npos) << "one line";
  // The rank and world come from the framework.
  EXPECT_THROW(Config::from_map(base_env()).job_params(3, 3), PanamaError);
  // A missing interface is found when the MTU is read from it.
  Env e = base_env();
  e.erase("PANAMA_MTU");
  e["PANAMA_IFACE"] = "nosuchif0";
  try {
    Config::from_map(e).job_params(0, 2);
    ADD_FAILURE() << "no error";
  } catch (const PanamaError& x) {
    EXPECT_NE(std::string(x.what()).find("PANAMA_IFACE=nosuchif0"), std::string::npos) << x.what();
  }
}

// A design of a format the backend does not know is refused (never summed as another format).
TEST(TorchConfig, RefusesAnUnknownFormat) {
  Env e = base_env();
  const std::string d = tmpdir() + "/design_fp8";
  std::system(("mkdir -p " + d).c_str());
  nlohmann::json j;
  std::ifstream(e["PANAMA_DESIGN"] + "/config.json") >> j;
  j["format"] = "fp8";
  std::ofstream(d + "/config.json") << j.dump(2);
  e["PANAMA_DESIGN"] = d;
  const std::string err = config_error(e);
  EXPECT_NE(err.find("PANAMA_DESIGN=" + d + "/config.json: unknown format 'fp8' (expected fp32, bf16 or fp16)"),
            std::string::npos)
      << err;
}

// c10d's timeout (init_process_group(timeout=...)) bounds every call: it becomes the call timeout,
// the status wait fits 40 times into it, and a repair without progress ends there; a variable set
// by hand wins.
TEST(TorchConfig, GroupTimeoutBoundsEveryCall) {
  Env e = base_env();
  e.erase("PANAMA_TIMEOUT_MS");
  Config c = Config::from_map(e);
  EXPECT_EQ(c.timeout_ms, 2000);
  c.with_group_timeout(30 * 60 * 1000);  // c10d's default: 30 min
  host::JobParams p = c.job_params(0, 3);
  EXPECT_EQ(p.timeout_ms, 30 * 60 * 1000);
  EXPECT_EQ(p.status_wait_ms, 200);
  EXPECT_EQ(p.repair_stall_ms, 30 * 60 * 1000);
  Config s = Config::from_map(e);
  s.with_group_timeout(4000);
  p = s.job_params(0, 3);
  EXPECT_EQ(p.timeout_ms, 4000);
  EXPECT_EQ(p.status_wait_ms, 100);  // 40 status waits fit into 4 s
  EXPECT_EQ(p.repair_stall_ms, 4000);
  e["PANAMA_TIMEOUT_MS"] = "800";
  e["PANAMA_STATUS_WAIT_MS"] = "300";
  Config h = Config::from_map(e);
  h.with_group_timeout(4000);
  p = h.job_params(0, 3);
  EXPECT_EQ(p.timeout_ms, 800);
  EXPECT_EQ(p.status_wait_ms, 300);
  EXPECT_THROW(h.with_group_timeout(0), PanamaError);
}

TEST(TorchConfig, OneFileAndTheEnvironmentWins) {
  const std::string f = tmpdir() + "/panama.conf";
  std::ofstream(f) << "# job 9\nPANAMA_JOB = 9\nPANAMA_TREES=1\n\nPANAMA_TIMEOUT_MS=1234\n";
  Env e = base_env();
  e.erase("PANAMA_JOB");
  e["PANAMA_CONFIG"] = f;  // the environment's PANAMA_TREES=2 wins over the file's 1
  const Config c = Config::from_map(e);
  EXPECT_EQ(c.job, 9);
  EXPECT_EQ(c.trees, 2);
  EXPECT_EQ(c.timeout_ms, 800);
  std::ofstream(f) << "PANAMA_JOB=9\nPANAMA_TRESS=2\n";
  EXPECT_NE(config_error(e).find(f + ":2: unknown name 'PANAMA_TRESS'"), std::string::npos) << config_error(e);
  std::ofstream(f) << "PANAMA_JOB\n";
  EXPECT_NE(config_error(e).find(":1: expected NAME=VALUE"), std::string::npos);
  e["PANAMA_CONFIG"] = tmpdir() + "/none.conf";
  EXPECT_NE(config_error(e).find("cannot open"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Channels on in-process links to the soft stand-in.

wire::CtxFile contexts(const std::vector<int>& ports, int trees, uint16_t jid) {
  wire::CtxFile c;
  for (int t = 0; t < trees; ++t) {
    wire::CtxEntry e;
    e.jid = jid;
    e.tid = static_cast<uint8_t>(t);
    e.members = ports;
    std::sort(e.members.begin(), e.members.end());
    e.multicast = true;
    e.group_mac = {0x01, 0x00, 0x5e, 0x01, 0x01, 0x01};
    e.group_ip = 0xEF010101;
    c.contexts.push_back(e);
  }
  return c;
}

// The stand-in on its own thread: the soft engine of `design`'s config.
struct Bed {
  host::LoopbackFabric fab;
  std::atomic<bool> stop{false};
  std::thread sw;
  panama::Config cfg;
  wire::CtxFile ctx;
  Bed(const std::string& design, const wire::CtxFile& c) : fab(4), cfg(panama::load_design(design).config), ctx(c) {
    start();
  }
  void start() {
    stop = false;
    sw = std::thread([this] {
      auto eng = host::make_soft_engine(cfg, ctx);
      host::SwitchChip chip(cfg.in.ports, ctx, host::ChipParams{});
      host::run_standin(fab, *eng, chip, host::StandInParams{}, stop);
    });
  }
  void halt() {
    stop = true;
    if (sw.joinable()) sw.join();
  }
  void restart() {  // a new stand-in process: contexts enabled afresh (expected VID 0)
    halt();
    start();
  }
  ~Bed() { halt(); }
};

using Bits = std::vector<uint32_t>;

Bits random_bits(size_t n, uint64_t seed, Format f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-100, 100);
  Bits v(n);
  const auto fb = format_bits(f);
  for (auto& x : v)
    x = f == Format::fp32 ? ref::float_to_bits(static_cast<float>(d(rng))) : ref::double_to_half(d(rng), fb, false);
  return v;
}

// The tree-order sum over the ports (rank r on port port_of[r]) of numerics.md.
Bits tree_sum(const std::vector<Bits>& in, const std::vector<int>& port_of, Format f) {
  Bits out(in[0].size());
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<uint32_t> vals(4, 0);
    std::vector<bool> mem(4, false);
    for (size_t r = 0; r < in.size(); ++r) {
      vals[static_cast<size_t>(port_of[r])] = in[r][i];
      mem[static_cast<size_t>(port_of[r])] = true;
    }
    out[i] = ref::tree_sum(f, false, vals, mem);
  }
  return out;
}

std::vector<uint8_t> to_bytes(const Bits& b, size_t es) {
  std::vector<uint8_t> v(b.size() * es);
  for (size_t i = 0; i < b.size(); ++i) std::memcpy(v.data() + es * i, &b[i], es);
  return v;
}

Bits from_bytes(const std::vector<uint8_t>& v, size_t es) {
  Bits b(v.size() / es, 0);
  for (size_t i = 0; i < b.size(); ++i) std::memcpy(&b[i], v.data() + es * i, es);
  return b;
}

// Runs one request on a channel and waits for it: the error's message, "" on success.
std::string run(Channel& ch, std::vector<uint8_t>& data, bool mean, bool strided = false) {
  std::promise<std::string> done;
  Request r;
  r.elems = data.size() / elem_bytes(ch.config().format);
  r.mean = mean;
  r.fill = [&](uint8_t* b) { std::memcpy(b, data.data(), data.size()); };
  if (strided)
    r.unpack = [&](const uint8_t* b) { std::memcpy(data.data(), b, data.size()); };
  else
    r.out = data.data();
  r.done = [&](std::exception_ptr e) {
    std::string m;
    if (e) try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        m = x.what();
      }
    done.set_value(m);
  };
  ch.submit(std::move(r));
  return done.get_future().get();
}

struct Workers {
  std::vector<std::unique_ptr<Channel>> ch;
  Workers(Bed& bed, const Env& env, const std::vector<int>& port_of) {
    const Config c = Config::from_map(env);
    for (size_t r = 0; r < port_of.size(); ++r)
      ch.push_back(std::make_unique<Channel>(c, static_cast<int>(r), static_cast<int>(port_of.size()),
                                             std::make_unique<host::LoopbackTransport>(bed.fab, port_of[r])));
  }
  // Every worker's request at once; the error messages.
  std::vector<std::string> all(std::vector<std::vector<uint8_t>>& data, bool mean, bool strided = false) {
    std::vector<std::string> err(ch.size());
    std::vector<std::thread> th;
    for (size_t r = 0; r < ch.size(); ++r) th.emplace_back([&, r] { err[r] = run(*ch[r], data[r], mean, strided); });
    for (auto& t : th) t.join();
    return err;
  }
  void probe_all(std::vector<std::string>& err) {
    std::vector<std::thread> th;
    err.assign(ch.size(), "");
    for (size_t r = 0; r < ch.size(); ++r)
      th.emplace_back([&, r] {
        try {
          ch[r]->probe();
        } catch (const std::exception& e) {
          err[r] = e.what();
        }
      });
    for (auto& t : th) t.join();
  }
};

// Sizes 1, one vector, one vector + 1, and an odd size over several host-library calls (4 KiB
// chunks), in both trees; sums bit for bit in tree order; the mean is the sum divided once.
void exact_sums(Format f) {
  const std::vector<int> port_of{2, 0, 3};
  Env env = base_env(f);
  env["PANAMA_CHUNK_KB"] = "4";
  Bed bed(env["PANAMA_DESIGN"], contexts(port_of, 2, 7));
  Workers w(bed, env, port_of);
  std::vector<std::string> err;
  w.probe_all(err);
  for (const auto& e : err) ASSERT_EQ(e, "");
  const size_t es = elem_bytes(f), data = static_cast<size_t>(w.ch[0]->params().count - 1);
  EXPECT_LT(w.ch[0]->chunk_elems(), 5000u);
  for (const size_t n : {size_t{1}, data, data + 1, size_t{5003}}) {
    for (const bool mean : {false, true}) {
      std::vector<Bits> in;
      std::vector<std::vector<uint8_t>> buf;
      for (int r = 0; r < 3; ++r) {
        in.push_back(random_bits(n, 100 * n + r + mean, f));
        buf.push_back(to_bytes(in.back(), es));
      }
      const auto errs = w.all(buf, mean, n == data + 1);
      Bits want = tree_sum(in, port_of, f);
      if (mean) {
        const auto fb = format_bits(f);
        for (auto& x : want)
          x = f == Format::fp32 ? ref::float_to_bits(ref::bits_to_float(x) / 3.0f)
                                : ref::double_to_half(ref::half_to_double(x, fb, false) / 3.0, fb, false);
      }
      for (int r = 0; r < 3; ++r) {
        ASSERT_EQ(errs[static_cast<size_t>(r)], "") << "n " << n << " rank " << r;
        EXPECT_EQ(from_bytes(buf[static_cast<size_t>(r)], es), want) << "n " << n << " mean " << mean << " rank " << r;
      }
    }
  }
  EXPECT_GT(w.ch[0]->stats().calls, 10u);  // 5003 elements took several calls
}

TEST(TorchChannel, Fp32SumsAndMeansBitExactAnySize) { exact_sums(Format::fp32); }
TEST(TorchChannel, Bf16SumsAndMeansBitExactAnySize) { exact_sums(Format::bf16); }
TEST(TorchChannel, Fp16SumsAndMeansBitExactAnySize) { exact_sums(Format::fp16); }

TEST(TorchChannel, ZeroSizeCompletesAndTooLargeIsRefusedAtOnce) {
  Env env = base_env();
  env["PANAMA_BUFFER_MB"] = "1";
  Bed bed(env["PANAMA_DESIGN"], contexts({0, 1}, 2, 7));
  Workers w(bed, env, {0, 1});
  std::vector<uint8_t> empty;
  EXPECT_EQ(run(*w.ch[0], empty, false), "");  // no peer needed: nothing to sum
  Request big;
  big.elems = (size_t{1} << 18) + 1;  // 1 MiB + 4 bytes of fp32
  try {
    w.ch[0]->submit(std::move(big));
    ADD_FAILURE() << "no error";
  } catch (const PanamaError& e) {
    EXPECT_EQ(e.cause, Cause::too_large);
    EXPECT_NE(std::string(e.what()).find("1048580 bytes"), std::string::npos) << e.what();
  }
}

TEST(TorchChannel, ProbeFindsAMissingSwitchAndAnotherFormat) {
  {  // No stand-in: nothing answers.
    Env env = base_env();
    env["PANAMA_TIMEOUT_MS"] = "300";
    env["PANAMA_REPAIR_ROUNDS"] = "0";
    host::LoopbackFabric fab(4);
    Channel ch(Config::from_map(env), 0, 2, std::make_unique<host::LoopbackTransport>(fab, 0));
    const auto t0 = std::chrono::steady_clock::now();
    try {
      ch.probe();
      ADD_FAILURE() << "no error";
    } catch (const PanamaError& e) {
      EXPECT_EQ(e.cause, Cause::unreachable) << e.what();
      EXPECT_NE(std::string(e.what()).find("start-up probe"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  }
  // The stand-in sums fp16 while the workers were told bf16: design mismatch. (Told fp32 on a
  // 16-bit design, the frames' lengths disagree with their COUNT and the accelerator drops them:
  // then the probe finds no answer, and its message names that case too.)
  for (const auto& [told, runs] : {std::pair{Format::bf16, Format::fp16}, std::pair{Format::fp32, Format::bf16}}) {
    Env env = base_env(told);
    env["PANAMA_MAX_ELEMS"] = "300";  // a COUNT both designs accept
    env["PANAMA_TIMEOUT_MS"] = "300";
    env["PANAMA_REPAIR_ROUNDS"] = "0";
    Bed bed(design_dir(runs), contexts({1, 3}, 2, 7));
    Workers w(bed, env, {1, 3});
    std::vector<std::string> err;
    w.probe_all(err);
    for (const auto& e : err)
      EXPECT_NE(e.find(told == Format::bf16 ? "panama: design mismatch: element " : "element size"), std::string::npos)
          << e;
  }
}

// A stand-in that stops mid-call: every worker's request ends with an error within the bound, the
// output untouched; the next request is refused at once.
TEST(TorchChannel, StandInGoneEndsInBoundedTimeOutputUntouched) {
  Env env = base_env();
  env["PANAMA_STATUS_WAIT_MS"] = "50";  // call timeout: max(800 ms, 40 status waits) = 2 s
  Bed bed(env["PANAMA_DESIGN"], contexts({0, 1}, 2, 7));
  Workers w(bed, env, {0, 1});
  bed.fab.set_switch_delay(std::chrono::microseconds(200));  // a slow switch: the call is long enough
  std::vector<std::vector<uint8_t>> buf{to_bytes(random_bits(400000, 1, Format::fp32), 4),
                                        to_bytes(random_bits(400000, 2, Format::fp32), 4)};
  const auto orig = buf;
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    bed.halt();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto errs = w.all(buf, false);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  killer.join();
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_NE(errs[r].find("panama: no result in time: timeout:"), std::string::npos) << errs[r];
    EXPECT_EQ(buf[r], orig[r]) << "a failed request must leave its output as it was";
  }
  EXPECT_LT(took, 0.3 + 2.0 + 2.0);  // the call timeout after the last result, plus slack
  Request again;
  again.elems = 10;
  try {
    w.ch[0]->submit(std::move(again));
    ADD_FAILURE() << "no error";
  } catch (const PanamaError& e) {
    EXPECT_EQ(e.cause, Cause::failed_before);
  }
}

// Queues a request on ch; `done` receives its error message ("" on success) and when it ended.
struct Pending {
  std::promise<std::pair<std::string, std::chrono::steady_clock::time_point>> p;
  std::future<std::pair<std::string, std::chrono::steady_clock::time_point>> f = p.get_future();
};
// `gloo`: the request's fallback (the fallback path).
void submit_async(Channel& ch, std::vector<uint8_t>& data, Pending& out, std::function<void()> gloo = {}) {
  Request r;
  r.elems = data.size() / elem_bytes(ch.config().format);
  r.fill = [&data](uint8_t* b) { std::memcpy(b, data.data(), data.size()); };
  r.out = data.data();
  r.gloo = std::move(gloo);
  r.done = [&out](std::exception_ptr e) {
    std::string m;
    if (e) try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        m = x.what();
      }
    out.p.set_value({m, std::chrono::steady_clock::now()});
  };
  ch.submit(std::move(r));
}

// docs/torch.md "Shutdown": a channel freed with requests queued runs them (as Gloo's group
// does), so every rank contributes to each; the sums are exact.
TEST(TorchChannel, FreedChannelRunsItsQueue) {
  const std::vector<int> port_of{1, 0};
  Env env = base_env();
  Bed bed(env["PANAMA_DESIGN"], contexts(port_of, 2, 7));
  Workers w(bed, env, port_of);
  constexpr int kQueued = 3;
  std::vector<std::vector<std::vector<uint8_t>>> data(2);
  std::vector<Bits> want;
  for (int q = 0; q < kQueued; ++q) {
    std::vector<Bits> in{random_bits(50000, 10 + q, Format::fp32), random_bits(50000, 20 + q, Format::fp32)};
    want.push_back(tree_sum(in, port_of, Format::fp32));
    for (size_t r = 0; r < 2; ++r) data[r].push_back(to_bytes(in[r], 4));
  }
  std::vector<std::vector<Pending>> pend(2);
  for (auto& p : pend) p = std::vector<Pending>(kQueued);
  for (size_t r = 0; r < 2; ++r)
    for (int q = 0; q < kQueued; ++q) submit_async(*w.ch[r], data[r][q], pend[r][q]);
  std::vector<std::thread> th;  // each rank frees its channel at once, with its queue full
  for (size_t r = 0; r < 2; ++r) th.emplace_back([&, r] { w.ch[r].reset(); });
  for (auto& t : th) t.join();
  for (size_t r = 0; r < 2; ++r)
    for (int q = 0; q < kQueued; ++q) {
      ASSERT_EQ(pend[r][q].f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
      EXPECT_EQ(pend[r][q].f.get().first, "") << "rank " << r << " request " << q;
      EXPECT_EQ(from_bytes(data[r][q], 4), want[static_cast<size_t>(q)]) << "rank " << r << " request " << q;
    }
}

// A closing channel whose request fails fails the rest of its queue at once (one call timeout in
// all, not one per request).
TEST(TorchChannel, ClosingChannelEndsItsQueueAfterAFailure) {
  Env env = base_env();
  env["PANAMA_STATUS_WAIT_MS"] = "50";  // call timeout: max(800 ms, 40 status waits) = 2 s
  Bed bed(env["PANAMA_DESIGN"], contexts({0, 1}, 2, 7));
  Workers w(bed, env, {0, 1});
  bed.halt();  // no stand-in: the first request of each rank times out
  constexpr int kQueued = 4;
  std::vector<std::vector<std::vector<uint8_t>>> data(2);
  for (size_t r = 0; r < 2; ++r)
    for (int q = 0; q < kQueued; ++q) data[r].push_back(to_bytes(random_bits(20000, 30 + q, Format::fp32), 4));
  std::vector<std::vector<Pending>> pend(2);
  for (auto& p : pend) p = std::vector<Pending>(kQueued);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t r = 0; r < 2; ++r) {
    for (int q = 0; q < kQueued; ++q) submit_async(*w.ch[r], data[r][q], pend[r][q]);
    w.ch[r]->close();  // while the first request waits for the stand-in
  }
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_TRUE(w.ch[r]->drain_for(10000)) << "rank " << r << ": the queue did not end within 10 s";
    const auto first = pend[r][0].f.get();
    EXPECT_NE(first.first.find("no result in time"), std::string::npos) << first.first;
    for (int q = 1; q < kQueued; ++q) {
      const auto rest = pend[r][q].f.get();
      EXPECT_NE(rest.first.find("not run: the backend is shutting down after a failed all_reduce"), std::string::npos)
          << "rank " << r << " request " << q << ": " << rest.first;
      EXPECT_LT(std::chrono::duration<double>(rest.second - first.second).count(), 0.5)
          << "request " << q << " was not failed at once";
    }
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0 + 2.0);
  // A closed channel takes no new request (the interpreter is exiting).
  std::vector<uint8_t> more = to_bytes(random_bits(10, 1, Format::fp32), 4);
  Pending late;
  try {
    submit_async(*w.ch[0], more, late);
    ADD_FAILURE() << "a closed channel took a request";
  } catch (const PanamaError& e) {
    EXPECT_NE(std::string(e.what()).find("shutting down"), std::string::npos) << e.what();
  }
}

// The ranks' agreement in memory (the process group uses c10d's store).
struct Board {
  std::mutex m;
  std::condition_variable cv;
  std::map<uint64_t, std::vector<std::string>> words;
  std::map<uint64_t, int> told;
};

class MemPeers : public Peers {
 public:
  MemPeers(std::shared_ptr<Board> b, int rank, int world) : b_(std::move(b)), rank_(rank), world_(world) {}
  std::vector<std::string> exchange(uint64_t n, const std::string& mine) override {
    std::unique_lock<std::mutex> l(b_->m);
    auto& w = b_->words[n];
    w.resize(static_cast<size_t>(world_));
    w[static_cast<size_t>(rank_)] = mine;
    ++b_->told[n];
    b_->cv.notify_all();
    if (!b_->cv.wait_for(l, std::chrono::seconds(20), [&] { return b_->told[n] == world_; }))
      throw PanamaError(Cause::timeout, "a rank did not report");
    return b_->words[n];
  }

 private:
  std::shared_ptr<Board> b_;
  int rank_, world_;
};

// A request with a stand-in for Gloo: its "sum" is the elements in rank order with the CPU's
// addition (not the tree's order), so that the path a result took shows in its bits.
struct Job {
  Workers& w;
  std::vector<std::vector<uint8_t>> in;  // this request's input of every rank
  std::vector<int> gloo_calls;
  explicit Job(Workers& ws) : w(ws), gloo_calls(ws.ch.size(), 0) {}
  std::vector<std::string> all(std::vector<std::vector<uint8_t>>& data, int bad_fill_rank = -1) {
    in = data;
    std::vector<std::string> err(w.ch.size());
    std::vector<std::thread> th;
    for (size_t r = 0; r < w.ch.size(); ++r)
      th.emplace_back([&, r] {
        std::promise<std::string> done;
        Request q;
        q.elems = data[r].size() / 4;
        q.fill = [&, r](uint8_t* b) {
          if (static_cast<int>(r) == bad_fill_rank) throw std::logic_error("a copy of the framework's failed");
          std::memcpy(b, data[r].data(), data[r].size());
        };
        q.out = data[r].data();
        q.gloo = [&, r] {
          ++gloo_calls[r];
          for (size_t i = 0; i < q.elems; ++i) {
            float s = 0;
            for (const auto& x : in) {
              float v;
              std::memcpy(&v, x.data() + 4 * i, 4);
              s += v;
            }
            std::memcpy(data[r].data() + 4 * i, &s, 4);
          }
        };
        q.done = [&](std::exception_ptr e) {
          std::string m;
          if (e) try {
              std::rethrow_exception(e);
            } catch (const PanamaError& x) {
              m = x.what();
            } catch (const std::exception& x) {
              m = std::string("own: ") + x.what();
            }
          done.set_value(m);
        };
        w.ch[r]->submit(std::move(q));
        err[r] = done.get_future().get();
      });
    for (auto& t : th) t.join();
    return err;
  }
};

Bits rank_order_sum(const std::vector<Bits>& in) {
  Bits out(in[0].size());
  for (size_t i = 0; i < out.size(); ++i) {
    float s = 0;
    for (const auto& b : in) s += ref::bits_to_float(b[i]);
    out[i] = ref::float_to_bits(s);
  }
  return out;
}

// On the fallback path a failed request does not end the job (the next one tries Gloo again),
// so without close()'s rule a closing channel would wait out every queued request: here Gloo
// fails after 0.7 s each time (its peers gone), and the queue of 4 must end after the first.
TEST(TorchChannel, ClosingChannelWithPeersEndsItsQueueAfterAFailure) {
  Env env = base_env();
  env["PANAMA_TIMEOUT_MS"] = "300";
  env["PANAMA_REPAIR_ROUNDS"] = "0";
  Bed bed(env["PANAMA_DESIGN"], contexts({0, 1}, 2, 7));
  Workers w(bed, env, {0, 1});
  auto board = std::make_shared<Board>();
  for (int r = 0; r < 2; ++r)
    w.ch[static_cast<size_t>(r)]->enable_fallback(std::make_shared<MemPeers>(board, r, 2), 0, 300);
  std::vector<std::string> err;
  w.probe_all(err);
  for (const auto& e : err) ASSERT_EQ(e, "");
  bed.halt();
  constexpr int kQueued = 4;
  std::vector<std::vector<std::vector<uint8_t>>> data(2);
  std::vector<std::vector<Pending>> pend(2);
  for (size_t r = 0; r < 2; ++r) {
    pend[r] = std::vector<Pending>(kQueued);
    for (int q = 0; q < kQueued; ++q) data[r].push_back(to_bytes(random_bits(2000, 40 + q, Format::fp32), 4));
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t r = 0; r < 2; ++r) {
    for (int q = 0; q < kQueued; ++q)
      submit_async(*w.ch[r], data[r][static_cast<size_t>(q)], pend[r][static_cast<size_t>(q)], [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(700));
        throw std::runtime_error("Gloo: a peer is gone");
      });
    w.ch[r]->close();
  }
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_TRUE(w.ch[r]->drain_for(20000)) << "rank " << r;
    const auto first = pend[r][0].f.get();
    EXPECT_NE(first.first, "") << "rank " << r << ": the first request should fail (no stand-in, Gloo failing)";
    for (int q = 1; q < kQueued; ++q) {
      const auto rest = pend[r][static_cast<size_t>(q)].f.get();
      EXPECT_NE(rest.first.find("not run: the backend is shutting down after a failed all_reduce"), std::string::npos)
          << "rank " << r << " request " << q << ": " << rest.first;
    }
  }
  // One accelerator timeout (0.3 s) and one Gloo failure (0.7 s), not four of each.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.5);
}

// The stand-in goes away mid-job: both ranks move to Gloo at the same request (its input intact),
// stay there, probe at every 2nd request, and return to the accelerator once a new stand-in
// answers; each result is exact to its path. A copy-in that fails on one rank fails that request
// on both (its own error there, "another rank failed" on the other) and moves nothing to Gloo.
TEST(TorchChannel, FallbackToGlooAndRejoin) {
  const std::vector<int> port_of{0, 2, 1};  // tree ((r0 + r2) + r1), not Gloo's stand-in's order
  Env env = base_env();
  env["PANAMA_TIMEOUT_MS"] = "300";
  env["PANAMA_REPAIR_ROUNDS"] = "0";
  Bed bed(env["PANAMA_DESIGN"], contexts(port_of, 2, 7));
  Workers w(bed, env, port_of);
  auto board = std::make_shared<Board>();
  for (int r = 0; r < 3; ++r)
    w.ch[static_cast<size_t>(r)]->enable_fallback(std::make_shared<MemPeers>(board, r, 3), 2, 300);
  std::vector<std::string> err;
  w.probe_all(err);
  for (const auto& e : err) ASSERT_EQ(e, "");  // request 0
  Job job(w);
  std::string path;
  for (int k = 1; k <= 9; ++k) {
    if (k == 3) bed.halt();
    if (k == 7) bed.restart();
    std::vector<Bits> in;
    std::vector<std::vector<uint8_t>> buf;
    for (int r = 0; r < 3; ++r) {
      in.push_back(random_bits(1000, 10 * k + r, Format::fp32));
      buf.push_back(to_bytes(in.back(), 4));
    }
    const int before = job.gloo_calls[0];
    const auto e = job.all(buf);
    for (size_t r = 0; r < 3; ++r) ASSERT_EQ(e[r], "") << "request " << k << ", rank " << r;
    EXPECT_EQ(job.gloo_calls[0], job.gloo_calls[1]) << "request " << k;
    EXPECT_EQ(job.gloo_calls[0], job.gloo_calls[2]) << "request " << k;
    const bool gloo = job.gloo_calls[0] > before;
    path += gloo ? 'G' : 'A';
    const Bits want = gloo ? rank_order_sum(in) : tree_sum(in, port_of, Format::fp32);
    EXPECT_NE(rank_order_sum(in), tree_sum(in, port_of, Format::fp32)) << "the two paths' sums must differ";
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(from_bytes(buf[r], 4), want) << "request " << k << ", rank " << r;
  }
  // 1-2 accelerator; 3 fails there and runs on Gloo; 5 probes (no stand-in); 7 probes (new
  // stand-in: back); 7-9 accelerator.
  EXPECT_EQ(path, "AAGGGGAAA");
  const FallbackStats f = w.ch[0]->fallback_stats();
  EXPECT_EQ(f.fallbacks, 1u);
  EXPECT_EQ(f.rejoins, 1u);
  EXPECT_EQ(f.rejoin_attempts, 2u);
  EXPECT_EQ(f.fell_at, 3);
  EXPECT_FALSE(f.on_gloo);

  std::vector<std::vector<uint8_t>> buf;
  for (int r = 0; r < 3; ++r) buf.push_back(to_bytes(random_bits(500, r, Format::fp32), 4));
  const auto orig = buf;
  const auto e = job.all(buf, 1);
  EXPECT_EQ(e[1], "own: a copy of the framework's failed");
  for (const size_t r : {size_t{0}, size_t{2}})
    EXPECT_NE(e[r].find("panama: another rank failed: rank 1 could not read its input"), std::string::npos) << e[r];
  EXPECT_EQ(buf, orig) << "a failed request leaves its output as it was";
  EXPECT_FALSE(w.ch[0]->fallback_stats().on_gloo) << "a framework error moves nothing to Gloo";
  std::vector<Bits> in;
  buf.clear();
  for (int r = 0; r < 3; ++r) {
    in.push_back(random_bits(700, 5 + r, Format::fp32));
    buf.push_back(to_bytes(in.back(), 4));
  }
  const auto e2 = job.all(buf);
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(e2[r], "");
    EXPECT_EQ(from_bytes(buf[r], 4), tree_sum(in, port_of, Format::fp32)) << "the accelerator goes on";
  }
}

}  // namespace
}  // namespace panama::torchx

namespace panama::torchx {
namespace {

// A link that drops every frame it receives while `deaf` is set (results lost to one rank only).
class DeafLink : public host::Transport {
 public:
  DeafLink(std::unique_ptr<host::Transport> in, std::shared_ptr<std::atomic<bool>> deaf)
      : in_(std::move(in)), deaf_(std::move(deaf)) {}
  void send(const wire::Bytes& f) override { in_->send(f); }
  bool recv(wire::Bytes& f, host::Clock::time_point deadline) override {
    while (in_->recv(f, deadline))
      if (!*deaf_) return true;
    return false;
  }
  void flush() override { in_->flush(); }

 private:
  std::unique_ptr<host::Transport> in_;
  std::shared_ptr<std::atomic<bool>> deaf_;
};

// The divergence: ranks 0 and 1 get every result of request 2 while rank 2 gets none. All three
// still run request 2 on Gloo with their original inputs (ranks 0 and 1 drop the accelerator's
// sums they hold), and return together at the re-join probe of request 4, on a stand-in that kept
// its contexts' state (the VIDs 2^28 ahead are accepted).
TEST(TorchChannel, FallbackWhenOnlyOneRankFailed) {
  const std::vector<int> port_of{0, 2, 1};
  Env env = base_env();
  env["PANAMA_TIMEOUT_MS"] = "300";
  env["PANAMA_REPAIR_ROUNDS"] = "0";
  Bed bed(env["PANAMA_DESIGN"], contexts(port_of, 2, 7));
  auto deaf = std::make_shared<std::atomic<bool>>(false);
  const Config c = Config::from_map(env);
  Workers w(bed, env, {});
  auto board = std::make_shared<Board>();
  for (int r = 0; r < 3; ++r) {
    std::unique_ptr<host::Transport> link =
        std::make_unique<host::LoopbackTransport>(bed.fab, port_of[static_cast<size_t>(r)]);
    if (r == 2) link = std::make_unique<DeafLink>(std::move(link), deaf);
    w.ch.push_back(std::make_unique<Channel>(c, r, 3, std::move(link)));
    w.ch.back()->enable_fallback(std::make_shared<MemPeers>(board, r, 3), 2, 300);
  }
  std::vector<std::string> err;
  w.probe_all(err);
  for (const auto& e : err) ASSERT_EQ(e, "");
  Job job(w);
  std::string path;
  for (int k = 1; k <= 5; ++k) {
    *deaf = k == 2;
    std::vector<Bits> in;
    std::vector<std::vector<uint8_t>> buf;
    for (int r = 0; r < 3; ++r) {
      in.push_back(random_bits(2000, 100 * k + r, Format::fp32));
      buf.push_back(to_bytes(in.back(), 4));
    }
    const int before = job.gloo_calls[0];
    std::vector<uint64_t> results;
    for (const auto& ch : w.ch) results.push_back(ch->stats().results);
    const auto e = job.all(buf);
    for (size_t r = 0; r < 3; ++r) ASSERT_EQ(e[r], "") << "request " << k << ", rank " << r;
    EXPECT_EQ(job.gloo_calls[0], job.gloo_calls[2]) << "request " << k;
    if (k == 2) {  // the divergence: ranks 0 and 1 had every result, rank 2 none
      EXPECT_GT(w.ch[0]->stats().results, results[0]);
      EXPECT_GT(w.ch[1]->stats().results, results[1]);
      EXPECT_EQ(w.ch[2]->stats().results, results[2]);
    }
    const bool gloo = job.gloo_calls[0] > before;
    path += gloo ? 'G' : 'A';
    const Bits want = gloo ? rank_order_sum(in) : tree_sum(in, port_of, Format::fp32);
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(from_bytes(buf[r], 4), want) << "request " << k << ", rank " << r;
  }
  EXPECT_EQ(path, "AGGAA");
  const FallbackStats f = w.ch[0]->fallback_stats();
  EXPECT_EQ(f.fell_at, 2);
  EXPECT_EQ(f.rejoins, 1u);
}

}  // namespace
}  // namespace panama::torchx
